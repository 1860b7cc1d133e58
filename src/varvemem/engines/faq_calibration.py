"""The calibration set of the FAQ reuse confidence (:mod:`.faq_confidence`) and its fit.

A seeded generator of (new question, stored question, same?) in English and Chinese, about
subjects and in wordings of its own (none of the behaviour benchmark's verbs, objects,
services or templates): paraphrases of a task ("how do I cancel my plan?"), of a property of
a named system ("which port does the ledger api listen on?") and of office questions; and the
negatives that fool one cosine: another action on the same object, the same action on another
object, another property of the same system, the same property of another system, another
value. ``bench/fit_faq_confidence.py`` embeds them with the default embedder and fits
:func:`fit` per language; its output is ``faq_calibration.json``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .faq_confidence import SIGNALS, Calibration, confidence, features

# (English verb, Chinese verb)
VERBS: list[tuple[str, str]] = [
    ("cancel", "取消"), ("upgrade", "升级"), ("install", "安装"), ("invite", "邀请"),
    ("approve", "审批"), ("verify", "验证"), ("rotate", "轮换"), ("revoke", "吊销"),
    ("merge", "合并"), ("pause", "暂停"), ("print", "打印"), ("sync", "同步"),
    ("download", "下载"), ("upload", "上传"), ("migrate", "迁移"), ("configure", "配置"),
    ("unlock", "解锁"), ("enable", "启用"), ("uninstall", "卸载"), ("edit", "编辑"),
]
OBJECTS: list[tuple[str, str]] = [
    ("licence", "许可证"), ("printer", "打印机"), ("VPN profile", "VPN 配置文件"),
    ("mailbox", "邮箱"), ("repository", "代码仓库"), ("certificate", "证书"),
    ("access token", "访问令牌"), ("newsletter", "新闻订阅"), ("badge", "工牌"),
    ("shift", "排班"), ("parcel", "包裹"), ("plan", "套餐"), ("phone", "手机"),
    ("mail alias", "邮件别名"), ("user group", "用户组"), ("shared folder", "共享文件夹"),
    ("contract", "合同"), ("voucher", "代金券"), ("browser extension", "浏览器插件"),
    ("screen recording", "录屏"), ("time sheet", "工时表"), ("pull request", "合并请求"),
]
TASK_EN = ["How do I {v} my {o}?", "How can I {v} the {o}?", "What's the procedure to {v} a {o}?",
           "Can you tell me how to {v} my {o}?", "Any idea how to {v} the {o}?",
           "{O}: how do I {v} it?", "Where do I go to {v} my {o}?", "I'd like to {v} my {o}",
           "how would I {v} a {o}", "Is it possible to {v} my {o}?", "need to {v} the {o}, how",
           "Quick question, how do you {v} a {o}?"]
TASK_ZH = ["怎么{v}{o}？", "{o}该怎么{v}？", "请教一下怎么{v}{o}", "{v}{o}怎么操作？",
           "想{v}一下{o}，怎么弄", "怎样才能{v}{o}？", "{o}要如何{v}", "求问{o}{v}的方法",
           "我要{v}{o}，该怎么做", "{o}能{v}吗？怎么弄", "请问{o}如何{v}？", "{o}的{v}流程是什么"]

SYSTEMS: list[tuple[str, str]] = [
    ("ledger api", "账本接口"), ("photo uploader", "照片上传服务"), ("quota keeper", "配额服务"),
    ("audit trail service", "审计服务"), ("feature flag service", "特性开关服务"),
    ("geo lookup service", "地理查询服务"), ("invoice renderer", "发票渲染服务"),
    ("session broker", "会话代理"), ("sms gateway", "短信网关"), ("pricing engine", "定价引擎"),
    ("membership service", "会员服务"), ("catalog indexer", "商品索引服务"),
]
# A property of a system: how it is asked.
PROPS: dict[str, tuple[list[str], list[str]]] = {
    "port": (["Which port does the {s} listen on?", "what port is the {s} on", "{S} port?",
              "On what port does the {s} serve?", "port number of the {s}?"],
             ["{s}用的是哪个端口？", "{s}端口号多少", "{s}监听在几号端口", "{s}的端口？",
              "请问{s}开的什么端口"]),
    "region": (["Which region hosts the {s}?", "what region is the {s} deployed in", "{S} region?",
                "In which cloud region does the {s} run?"],
               ["{s}在哪个地域？", "{s}部署在哪个区域", "{s}的地域是哪里", "{s}放在哪个地区"]),
    "owner": (["Who owns the {s}?", "who is responsible for the {s}", "{S} owner?",
               "Which person maintains the {s}?", "who's in charge of the {s}"],
              ["{s}的负责人是谁？", "{s}归谁管", "谁负责{s}？", "{s}找谁", "{s}由谁维护"]),
    "version": (["What version is the {s} on?", "which version of the {s} is live", "{S} version?",
                 "Current version of the {s}?"],
                ["{s}现在是什么版本？", "{s}的版本号是多少", "{s}跑的哪个版本", "{s}版本？"]),
    "timeout": (["What is the timeout of the {s}?", "how long before the {s} times out",
                 "{S} timeout?"],
                ["{s}的超时时间是多少？", "{s}超时设的多少", "{s}多久超时"]),
    "address": (["What is the URL of the {s}?", "where is the {s} endpoint", "{S} address?",
                 "Which endpoint does the {s} expose?"],
                ["{s}的地址是什么？", "{s}的访问链接", "{s}网址是多少", "{s}接口地址？"]),
    "logs": (["Where are the logs of the {s}?", "where can I find the {s} logs", "{S} logs?"],
             ["{s}的日志在哪？", "去哪看{s}的日志", "{s}日志放在哪里"]),
    "memory": (["How much memory does the {s} get?", "what is the {s} memory limit",
                "{S} RAM?"],
               ["{s}分配了多少内存？", "{s}内存上限多少", "{s}给了多大内存"]),
    "oncall": (["Who is on call for the {s}?", "which team is on-call for the {s}",
                "{S} on-call?"],
               ["{s}谁值班？", "{s}的值班人是谁", "{s}今天谁在值班"]),
}
# Office questions: groups of paraphrases; groups that share a topic are each other's negatives.
OFFICE: list[tuple[list[str], list[str]]] = [
    (["How do I claim a parking spot?", "what's the way to claim a parking space",
      "Can I claim a parking spot somehow?"],
     ["怎么申请停车位？", "停车位要怎么申请", "想申请一个停车位，怎么办"]),
    (["How do I report a broken chair?", "where do I report a chair that is broken",
      "A chair is broken, how do I report it?"],
     ["椅子坏了怎么报修？", "椅子坏了在哪报修", "坏掉的椅子要怎么报修"]),
    (["When is the holiday calendar published?", "when does the holiday calendar get published"],
     ["假期日历什么时候发布？", "假期日历何时发布"]),
    (["How many vacation days do I get?", "how many vacation days do we have per year"],
     ["年假有几天？", "每年年假有几天"]),
    (["How do I apply for annual leave?", "what's the process to apply for annual leave",
      "how can I apply for my annual leave"],
     ["年假怎么申请？", "申请年假的流程是什么", "想请年假，怎么申请"]),
    (["Where is the first aid kit?", "where can I find the first aid kit"],
     ["急救箱在哪里？", "急救箱放在哪"]),
    (["Who approves travel requests?", "who is the approver of travel requests"],
     ["出差申请谁审批？", "出差申请由谁审批"]),
    (["How do I book a business trip?", "what's the way to book travel for a business trip"],
     ["出差怎么订票？", "出差的票要怎么订"]),
    (["Where do I return my visitor badge?", "where should visitor badges be returned"],
     ["访客证在哪里归还？", "访客证要还到哪里"]),
    (["How long does the travel refund take?", "how many days until a travel refund arrives"],
     ["差旅退款要多久？", "差旅退款几天能到"]),
]


@dataclass(frozen=True)
class Example:
    """One calibration pair: the new question, the stored one, whether they ask the same."""

    lang: str
    question: str
    stored: str
    same: bool
    kind: str


def _fill(tpl: str, **kw: str) -> str:
    caps = {k.upper(): v[:1].upper() + v[1:] for k, v in kw.items()}
    return tpl.format(**kw, **caps)


def _two(rng: random.Random, pool: Sequence[str]) -> tuple[str, str]:
    a, b = rng.sample(list(pool), 2)
    return a, b


def generate(seed: int = 7, n_per_kind: int = 120) -> list[Example]:
    """The calibration set (deterministic for a seed)."""
    rng = random.Random(seed)
    out: list[Example] = []
    for lang in ("en", "zh"):
        z = lang == "zh"
        tpl = TASK_ZH if z else TASK_EN
        props = {k: v[z] for k, v in PROPS.items()}
        for _ in range(n_per_kind):
            v, v2 = rng.sample(VERBS, 2)
            o, o2 = rng.sample(OBJECTS, 2)
            t1, t2 = _two(rng, tpl)
            stored = _fill(t1, v=v[z], o=o[z])
            out.append(Example(lang, _fill(t2, v=v[z], o=o[z]), stored, True, "task"))
            out.append(Example(lang, _fill(rng.choice(tpl), v=v2[z], o=o[z]), stored, False,
                               "task-other-action"))
            out.append(Example(lang, _fill(rng.choice(tpl), v=v[z], o=o2[z]), stored, False,
                               "task-other-object"))
            s, s2 = rng.sample(SYSTEMS, 2)
            p, p2 = rng.sample(list(props), 2)
            q1, q2 = _two(rng, props[p])
            stored = _fill(q1, s=s[z])
            out.append(Example(lang, _fill(q2, s=s[z]), stored, True, "property"))
            out.append(Example(lang, _fill(rng.choice(props[p2]), s=s[z]), stored, False,
                               "property-other"))
            out.append(Example(lang, _fill(rng.choice(props[p]), s=s2[z]), stored, False,
                               "property-other-system"))
            n1, n2 = rng.sample(range(2, 40), 2)
            item = rng.choice(OBJECTS)[z]
            vt = ("第{n}版{o}怎么{v}？" if z else "How do I {v} the {o} v{n}?")
            vv = rng.choice(VERBS)[z]
            out.append(Example(lang, vt.format(n=n2, o=item, v=vv), vt.format(n=n1, o=item, v=vv),
                               False, "value"))
        for group in OFFICE:
            qs = group[z]
            for a in qs:
                for b in qs:
                    if a != b:
                        out.append(Example(lang, a, b, True, "office"))
            for other in OFFICE:
                if other is not group:
                    out.append(Example(lang, rng.choice(other[z]), qs[0], False, "office-other"))
    return out


def split(examples: Sequence[Example], held_share: float = 0.3,
          seed: int = 11) -> tuple[list[Example], list[Example]]:
    """(fit slice, held-apart slice), at random."""
    rng = random.Random(seed)
    fit: list[Example] = []
    held: list[Example] = []
    for ex in examples:
        (held if rng.random() < held_share else fit).append(ex)
    return fit, held


Embed = Callable[[Sequence[str]], np.ndarray]


def cosines(examples: Sequence[Example], embed: Embed) -> list[float]:
    """The cosine of each example's questions (the embedder's vectors are L2-normalised)."""
    a = embed([e.question for e in examples])
    b = embed([e.stored for e in examples])
    return [float(x) for x in np.sum(a * b, axis=1)]


# The signs the weights must keep (SIGNALS' order): more cosine or overlap never lowers the
# confidence, more swapped or extra words never raise it.
_LOW = np.array([0.0, 0.0, -np.inf, -np.inf])
_HIGH = np.array([np.inf, np.inf, 0.0, 0.0])


def _logistic(x: np.ndarray, y: np.ndarray, l2: float = 0.1, steps: int = 50) -> np.ndarray:
    """Weights (bias first) of an L2-regularised logistic regression (Newton's method, each
    step projected on the signs of ``_LOW``/``_HIGH``)."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    reg = l2 * np.eye(xb.shape[1])
    reg[0, 0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -60, 60)))
        grad = xb.T @ (p - y) + reg @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + reg + 1e-9 * np.eye(len(w))
        w = w - np.linalg.solve(hess, grad)
        w[1:] = np.clip(w[1:], _LOW, _HIGH)
    return w


def fit(examples: Sequence[Example], cos: Sequence[float]) -> dict[str, Calibration]:
    """One :class:`Calibration` per language, over the examples no veto or equality decides."""
    out: dict[str, Calibration] = {}
    for lang in sorted({e.lang for e in examples}):
        rows, labels = [], []
        for e, c in zip(examples, cos):
            if e.lang != lang:
                continue
            parts, why = features(e.question, e.stored, c)
            if why or parts["equal"]:
                continue
            rows.append([parts[s] for s in SIGNALS])
            labels.append(1.0 if e.same else 0.0)
        w = _logistic(np.array(rows), np.array(labels))
        out[lang] = Calibration(float(w[0]), {s: float(v) for s, v in zip(SIGNALS, w[1:])})
    return out


def evaluate(examples: Sequence[Example], cos: Sequence[float], table: dict[str, Calibration],
             threshold: float) -> dict[str, dict[str, Any]]:
    """Precision and recall of reuse at ``threshold``, per language and kind of negative."""
    out: dict[str, dict[str, Any]] = {}
    for lang in sorted({e.lang for e in examples}):
        tp = fp = pos = 0
        wrong: dict[str, int] = {}
        for e, c in zip(examples, cos):
            if e.lang != lang:
                continue
            conf = confidence(e.question, e.stored, c, table)
            said = not conf.veto and conf.value >= threshold
            pos += e.same
            tp += said and e.same
            if said and not e.same:
                fp += 1
                wrong[e.kind] = wrong.get(e.kind, 0) + 1
        out[lang] = {"precision": tp / (tp + fp) if tp + fp else math.nan,
                     "recall": tp / pos if pos else math.nan, "wrong": wrong,
                     "examples": sum(1 for e in examples if e.lang == lang)}
    return out


def threshold_for(examples: Sequence[Example], cos: Sequence[float],
                  table: dict[str, Calibration], precision: float = 0.995) -> float:
    """The lowest threshold from 0.5 (steps of 0.01) at which every language reaches
    ``precision``."""
    for t in np.arange(0.5, 1.0, 0.01):
        res = evaluate(examples, cos, table, float(t))
        if all(r["precision"] >= precision for r in res.values()):
            return round(float(t), 2)
    return 0.99
