"""How sure ``ask`` may be that a stored pair answers a new question: a calibrated confidence.

One cosine says two questions are about the same thing, not that they ask the same: "what
port does X use" and "what region is X in" sit close, and so do "reset" and "export" the same
password. The confidence combines what can be read offline from both questions:

- ``cosine``: the default embedder's cosine of the two questions;
- ``overlap``: the Jaccard share of their content units (English words by stem, CJK bigrams,
  concepts such as ``@reset`` for "reset"/"重置" from :data:`CONCEPTS`), the question's frame
  ("how do I", "请问", "怎么") left out;
- ``swapped``: content units each side has and the other lacks (a word put in place of
  another: a different object, service or verb), and ``extra``: units only one side has;
- **vetoes**, which no cosine outweighs: the asked attribute, action or environment differs
  (port vs region, 重置 vs 归档, staging vs production), the values differ (numbers,
  identifiers, hosts, versions), the named things differ (``SSH`` vs ``API``), or one side
  narrows the other's object with a modifier ("meeting notes" vs "notes"; English only).

A logistic function of the signals, fitted per language on a generated calibration set
(:mod:`.faq_calibration`, ``bench/fit_faq_confidence.py``), turns them into the probability
that the stored answer is right; equal normalised questions are certain. A second model's
cosine may settle the gray zone (:func:`decide`).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import Stemmer

from ..language.stopwords import CHINESE_CHARS, ENGLISH
from .claims import normalise, values

# A second model's cosine of (question, stored question), or None when it cannot say.
SecondOpinion = Callable[[str, str], "float | None"]

# The concepts a question may ask about, by kind. A mismatch of the same kind vetoes reuse.
# English entries are words (matched by Snowball stem) or phrases (matched as written, lower
# case); Chinese entries are matched longest first inside a CJK run.
CONCEPTS: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "action": {
        "reset": (("reset", "reinitialise", "reinitialize"), ("重置", "重设")),
        "delete": (("delete", "remove", "erase", "purge", "wipe"), ("删除", "删掉", "移除", "清除", "删")),
        "export": (("export",), ("导出",)),
        "import": (("import",), ("导入",)),
        "rename": (("rename",), ("重命名", "改名")),
        "share": (("share",), ("共享", "分享")),
        "backup": (("backup", "back up"), ("备份",)),
        "restore": (("restore", "recover", "undelete"), ("恢复", "还原", "找回")),
        "disable": (("disable", "deactivate", "turn off", "switch off"), ("停用", "禁用", "关闭", "关掉")),
        "enable": (("enable", "activate", "turn on", "switch on"), ("启用", "开启", "激活", "打开")),
        "transfer": (("transfer", "hand over"), ("转移", "转让", "移交")),
        "renew": (("renew", "extend"), ("续期", "续费", "延期", "续订")),
        "archive": (("archive",), ("归档",)),
        "lock": (("lock", "freeze"), ("锁定", "冻结", "锁")),
        "unlock": (("unlock", "unfreeze"), ("解锁", "解冻")),
        "create": (("create", "set up", "setup", "add"), ("创建", "新建", "添加", "新增", "建")),
        "obtain": (("request", "obtain", "apply for"), ("申请", "领取", "获取", "领")),
        "book": (("book", "reserve"), ("预定", "预订", "预约", "订")),
        "cancel": (("cancel", "unsubscribe"), ("取消", "退订")),
        "return": (("return", "give back", "send back"), ("退还", "归还", "退回", "还")),
        "submit": (("submit", "hand in"), ("提交", "递交")),
        "change": (("change", "update", "edit", "modify", "alter"), ("修改", "更改", "更新", "编辑", "改")),
        "upgrade": (("upgrade",), ("升级",)),
        "downgrade": (("downgrade",), ("降级",)),
        "install": (("install",), ("安装", "装")),
        "uninstall": (("uninstall",), ("卸载",)),
        "login": (("login", "log in", "log into", "sign in", "signin"), ("登录", "登陆")),
        "logout": (("logout", "log out", "sign out", "signout"), ("登出", "退出登录")),
        "register": (("register", "sign up", "signup", "enrol", "enroll"), ("注册", "报名")),
        "invite": (("invite",), ("邀请",)),
        "approve": (("approve", "sign off"), ("审批", "批准", "审核")),
        "verify": (("verify", "validate"), ("验证", "校验")),
        "rotate": (("rotate",), ("轮换",)),
        "revoke": (("revoke",), ("吊销", "撤销", "撤回")),
        "merge": (("merge",), ("合并",)),
        "rollback": (("rollback", "roll back", "revert"), ("回滚", "回退")),
        "deploy": (("deploy", "release"), ("部署", "发布", "上线", "发版")),
        "pause": (("pause", "suspend"), ("暂停", "挂起")),
        "resume": (("resume", "unpause"), ("继续", "恢复运行")),
        "print": (("print",), ("打印",)),
        "sync": (("sync", "synchronise", "synchronize"), ("同步",)),
        "connect": (("connect",), ("连接", "接入")),
        "configure": (("configure", "config"), ("配置", "设置")),
        "pay": (("pay",), ("支付", "付款", "缴费", "付")),
        "refund": (("refund",), ("退款",)),
        "migrate": (("migrate",), ("迁移",)),
        "download": (("download",), ("下载",)),
        "upload": (("upload",), ("上传",)),
        "join": (("join",), ("加入",)),
        "leave": (("quit",), ("退出", "离开")),
        "contact": (("contact", "reach"), ("联系", "联络")),
        "schedule": (("schedule",), ("排期",)),
        "recharge": (("recharge", "top up", "topup"), ("充值",)),
        "expense": (("reimburse", "expense"), ("报销",)),
    },
    "attribute": {
        "port": (("port",), ("端口号", "端口")),
        "region": (("region", "zone"), ("地域", "区域", "地区", "可用区")),
        "owner": (("owner", "own", "responsible", "maintainer", "maintain", "in charge"),
                  ("负责人", "负责", "归谁", "维护人", "维护", "谁管", "找谁", "管理员")),
        "database": (("database", "db"), ("数据库",)),
        "cluster": (("cluster",), ("集群",)),
        "version": (("version",), ("版本号", "版本")),
        "memory": (("memory", "ram"), ("内存",)),
        "cpu": (("cpu", "vcpu"), ("处理器", "核数")),
        "disk": (("disk", "storage volume"), ("磁盘", "硬盘")),
        "branch": (("branch",), ("分支",)),
        "alerts": (("alert", "page", "pager"), ("告警", "报警")),
        "logs": (("log",), ("日志",)),
        "address": (("url", "address", "endpoint", "link", "hostname"), ("地址", "网址", "链接")),
        "timeout": (("timeout", "time out", "times out", "timed out"), ("超时",)),
        "price": (("price", "cost", "fee", "how much does"), ("价格", "费用", "多少钱", "收费", "价钱")),
        "deadline": (("deadline",), ("截止", "期限")),
        "limit": (("limit", "quota", "maximum", "max"), ("上限", "限制", "配额", "最多")),
        "status": (("status", "state"), ("状态",)),
        "language": (("language",), ("语言",)),
        "replicas": (("replica",), ("副本",)),
        "schedule_time": (("what time", "opening hours", "hours"), ("几点", "营业时间")),
        "duration": (("how long", "duration"), ("多久", "多长时间", "几天", "多少天")),
        "count": (("how many", "number of"), ("多少个", "几个", "数量")),
        "reason": (("why", "reason", "cause"), ("为什么", "为啥", "原因")),
        "location": (("where",), ("哪里", "哪儿", "在哪", "什么地方")),
        "person": (("who", "whom"), ("谁",)),
        "time": (("when",), ("什么时候", "何时")),
        "oncall": (("on-call", "on call", "oncall"), ("值班",)),
        "size": (("size",), ("大小", "尺寸")),
    },
    "env": {
        "staging": (("staging", "stage", "pre-prod", "preprod"), ("预发", "预生产")),
        "production": (("production", "prod"), ("生产", "线上")),
        "test": (("test",), ("测试",)),
        "dev": (("dev", "development"), ("开发",)),
        "canary": (("canary",), ("灰度",)),
    },
}
# Attributes that only say the kind of answer (who, where, when, why, how many, a limit): the focus
# when it has no other attribute, else left out ("who owns X" asks for the owner).
_WH = frozenset(("person", "location", "time", "reason", "duration", "count", "limit", "size"))

# The frame of a question, left out of the content: what asking adds, not what is asked.
_FRAME_EN = frozenset("""
how way ways step steps process procedure need needs want wanna would like help tell know
please possible able go there any idea someone anyone explain guide instructions instruction
method best correct proper properly exactly actually just kindly one thing things can could
may might shall will let us show me also quick question q hi hello hey thanks thank pls plz
anybody somebody sb someone supposed right wondering wonder ask asking trying try figure out
run runs running live find current currently serve serves use uses using used exactly get
ok okay cheers thx pls great cool also btw
""".split())
_FRAME_ZH = (
    "怎么样", "怎么", "怎样", "如何", "请问", "请教", "求问", "问一下", "问下", "一下", "我想", "想要",
    "应该", "需要", "能不能", "可不可以", "可以", "才能", "有没有", "有办法", "办法", "方法", "步骤",
    "流程", "操作", "是什么", "什么", "多少", "告诉我", "帮我", "具体", "到底", "进行", "一个", "该",
    "要", "想", "能", "做", "弄", "办", "请", "去", "得", "咋", "呢", "吗", "吧", "啊", "呀", "哪个",
    "哪些", "哪", "是", "我", "们", "你", "您", "还有", "还是", "还能", "还要", "现在", "目前", "当前",
    "用的", "跑的", "放在", "去哪看", "设的", "给了", "开的", "咨询", "问问", "问",
    # small talk around the question ("你好，请问...", "谢谢，那...")
    "你好", "您好", "谢谢", "多谢", "感谢", "好的", "收到", "嗨", "哈喽", "那么", "那",
)
# Chinese words that hold a concept's character but not its meaning (建议 is no 建, 订单 no
# 订): kept as content.
_PLAIN_ZH = ("问题", "建议", "订单", "领导", "改进", "付费", "装修", "删帖", "还款", "配置文件", "合并请求",
             "共享文件夹", "共享盘", "打开方式")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_LATIN = re.compile(r"[a-z0-9][a-z0-9'’]*")
_NAME_EN = re.compile(r"(?<![\w.])(?:[A-Z]{2,}[a-z]*|[A-Z][a-z]+[A-Z]\w*)(?![\w])|(?<=[a-z,] )[A-Z][a-z]+")
_DIGITS = re.compile(r"\d+(?:\.\d+)*")  # also where claims' values miss them: 第19版
_HARD_VALUES = frozenset(("url", "email", "date", "time", "amount", "ip", "host", "id", "number"))
_CAP = 3  # swapped/extra counts are capped: more changed words say no more


@lru_cache(maxsize=1)
def _stem() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], list[tuple[re.Pattern[str], str]], list[tuple[str, str]]]:
    """(English stem -> concept, English phrase patterns -> concept, Chinese terms longest first)."""
    words: dict[str, str] = {}
    phrases: list[tuple[re.Pattern[str], str]] = []
    zh: list[tuple[str, str]] = []
    for kind, table in CONCEPTS.items():
        for name, (en, cn) in table.items():
            cid = f"{kind}:{name}"
            for w in en:
                if re.fullmatch(r"[a-z]+", w):
                    words[_stem().stemWord(w)] = cid
                else:
                    phrases.append((re.compile(rf"(?<![\w-]){re.escape(w)}(?![\w-])"), cid))
            zh.extend((t, cid) for t in cn)
    zh.extend((t, "") for t in _FRAME_ZH)
    zh.extend((t, "=") for t in _PLAIN_ZH)
    zh.sort(key=lambda p: -len(p[0]))
    phrases.sort(key=lambda p: -len(p[0].pattern))
    return words, phrases, zh


@dataclass(frozen=True)
class Units:
    """What a question asks, as sets: ``concepts`` by kind, the other ``content`` units, the
    hard ``values`` (numbers, identifiers, hosts...) and the ``names`` (acronyms, product
    names)."""

    concepts: dict[str, frozenset[str]]
    content: frozenset[str]
    values: frozenset[str]
    names: frozenset[str]
    # English content words next to each other, (modifier, head): "meeting notes"
    compounds: frozenset[tuple[str, str]] = frozenset()

    @property
    def all(self) -> frozenset[str]:
        return self.content | {f"@{c}" for cs in self.concepts.values() for c in cs}


@lru_cache(maxsize=1)
def _zh_terms() -> tuple[dict[str, str], tuple[int, ...]]:
    """The Chinese terms as a dict (the first of equal terms wins) and their lengths, longest
    first."""
    terms: dict[str, str] = {}
    for term, cid in _tables()[2]:
        terms.setdefault(term, cid)
    return terms, tuple(sorted({len(t) for t in terms}, reverse=True))


def _zh_units(run: str, concepts: set[str], content: set[str]) -> None:
    terms, lengths = _zh_terms()
    seg: list[str] = []

    def flush() -> None:
        s = "".join(ch for ch in seg if ch not in CHINESE_CHARS)
        if len(s) == 1:
            content.add(s)
        content.update(s[i:i + 2] for i in range(len(s) - 1))
        seg.clear()

    i = 0
    while i < len(run):
        for n in lengths:
            term = run[i:i + n]
            cid = terms.get(term) if len(term) == n else None
            if cid is not None:
                if cid == "=":
                    seg.extend(term)
                    i += len(term)
                    break
                flush()
                if cid:
                    concepts.add(cid)
                i += len(term)
                break
        else:
            ch = run[i]
            if ch in CHINESE_CHARS:
                flush()
            else:
                seg.append(ch)
            i += 1
    flush()


@lru_cache(maxsize=4096)
def units(text: str) -> Units:
    """The content units of a question (see the module's docstring)."""
    raw = unicodedata.normalize("NFKC", text)
    vals = frozenset({v.text for v in values(raw) if v.kind in _HARD_VALUES
                      and (v.kind != "id" or any(c.isdigit() for c in v.text))}
                     | {f"#{n}" for n in _DIGITS.findall(raw)})
    names = {m.group().lower() for m in _NAME_EN.finditer(raw)}
    low = raw.lower()
    words, phrases, _ = _tables()
    concepts: set[str] = set()
    for pattern, cid in phrases:
        if pattern.search(low):
            concepts.add(cid)
            low = pattern.sub(" ", low)
    content: set[str] = set()
    compounds: set[tuple[str, str]] = set()
    pos = 0
    for m in _CJK_RUN.finditer(low):
        _latin(low[pos:m.start()], words, concepts, content, names, compounds, cjk=True)
        _zh_units(m.group(), concepts, content)
        pos = m.end()
    _latin(low[pos:], words, concepts, content, names, compounds, cjk=pos > 0)
    by_kind: dict[str, set[str]] = {k: set() for k in CONCEPTS}
    for cid in concepts:
        kind, name = cid.split(":", 1)
        by_kind[kind].add(name)
    return Units({k: frozenset(v) for k, v in by_kind.items()}, frozenset(content), vals,
                 frozenset(names), frozenset(compounds))


def _latin(part: str, words: dict[str, str], concepts: set[str], content: set[str],
           names: set[str], compounds: set[tuple[str, str]], *, cjk: bool) -> None:
    prev, prev_end = "", -1
    for m in _LATIN.finditer(part):
        w = m.group().replace("’", "'")
        w = w[:-2] if w.endswith("'s") else w
        stem = _stem().stemWord(w)
        if w in ENGLISH or w in _FRAME_EN or stem in _FRAME_EN:
            prev = ""
            continue
        # "shared folder", "locked account": a participle names a state, not the action asked
        if stem in words and not (w.endswith("ed") and words[stem].startswith("action:")):
            concepts.add(words[stem])
            prev = ""
        elif not w.isdigit():
            content.add(stem)
            if prev and not cjk and part[prev_end:m.start()] == " ":
                compounds.add((prev, stem))
            prev, prev_end = stem, m.end()
            if cjk and len(w) > 1:  # a Latin word in Chinese text names a thing (SSH, Kafka)
                names.add(w)


@dataclass
class Confidence:
    """The confidence that a stored question asks what the new one asks, and its parts."""

    value: float
    lang: str
    parts: dict[str, float] = field(default_factory=dict)
    veto: str = ""

    def explain(self) -> dict[str, Any]:
        out: dict[str, Any] = {"confidence": round(self.value, 4), "lang": self.lang,
                               **{k: round(v, 4) for k, v in self.parts.items()}}
        if self.veto:
            out["veto"] = self.veto
        return out


def language(text: str) -> str:
    """``zh`` when the text has CJK characters, else ``en`` (the calibrations there are)."""
    return "zh" if _CJK_RUN.search(text) else "en"


def _fmt(s: Iterable[str]) -> str:
    return "/".join(sorted(s))


def veto(a: Units, b: Units) -> str:
    """Why ``a`` and ``b`` cannot ask the same (empty when nothing says so)."""
    if not a.all or not b.all:  # "how?", "what is it?": nothing to compare
        return "no content words to compare"
    for kind in ("attribute", "action", "env"):
        x, y = a.concepts[kind], b.concepts[kind]
        if kind == "attribute":
            # A wh-word yields to a named attribute ("who owns X": the owner); a side that
            # has only wh-words may still ask for the other's attribute ("由谁维护", "负责人").
            nx, ny = x - _WH, y - _WH
            x, y = (nx, ny) if nx and ny else (x, y) if not (nx or ny) else (frozenset(), frozenset())
        # one asks for an action (attribute...) the other, which names one, does not: "cancel
        # a booking" is not "book"
        if (x - y and y) or (y - x and x):
            return f"{kind} differs: {_fmt(x)} vs {_fmt(y)}"
        if kind == "env" and x != y:  # one names an environment the other does not
            return f"env differs: {_fmt(x) or '-'} vs {_fmt(y) or '-'}"
    if a.values != b.values:
        return f"values differ: {_fmt(a.values) or '-'} vs {_fmt(b.values) or '-'}"
    if a.names and b.names and not a.names & b.names:
        return f"names differ: {_fmt(a.names)} vs {_fmt(b.names)}"
    for one, other in ((a, b), (b, a)):  # "meeting notes" is another thing than "notes"
        for mod, head in one.compounds:
            if mod not in other.content and head in other.content:
                return f"a modifier only one side has: {mod} {head}"
    return ""


def features(question: str, stored: str, cosine: float) -> tuple[dict[str, float], str]:
    """The signals of one (question, stored question) pair and the veto, if any."""
    a, b = units(question), units(stored)
    ua, ub = a.all, b.all
    union = ua | ub
    only_a, only_b = ua - ub, ub - ua
    swapped = min(len(only_a), len(only_b))
    # Words only one side has beyond those swapped: a qualifier ("for guests", "on mobile")
    # narrows the question; concepts are left out (the vetoes judge them, and a wh-word
    # more or less changes nothing).
    words_a = len([u for u in only_a if not u.startswith("@")])
    words_b = len([u for u in only_b if not u.startswith("@")])
    parts = {"cosine": float(cosine),
             "overlap": len(ua & ub) / len(union) if union else 1.0,
             "swapped": float(min(swapped, _CAP)),
             "extra": float(min(abs(words_a - words_b), _CAP)),
             "equal": float(normalise(question) == normalise(stored))}
    return parts, veto(a, b)


# The signals the logistic function reads, in the order of its coefficients.
SIGNALS = ("cosine", "overlap", "swapped", "extra")


@dataclass(frozen=True)
class Calibration:
    """One language's fitted logistic function: ``bias`` and a weight per signal."""

    bias: float
    weights: dict[str, float]

    def probability(self, parts: dict[str, float]) -> float:
        z = self.bias + sum(w * parts[s] for s, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@lru_cache(maxsize=1)
def calibrations() -> dict[str, Calibration]:
    """The fitted coefficients (``faq_calibration.json``, written by
    ``bench/fit_faq_confidence.py``), by language."""
    data = json.loads(resources.files(__package__).joinpath("faq_calibration.json").read_text(
        encoding="utf-8"))
    return {lang: Calibration(float(c["bias"]), {s: float(c["weights"][s]) for s in SIGNALS})
            for lang, c in data["languages"].items()}


def confidence(question: str, stored: str, cosine: float,
               table: dict[str, Calibration] | None = None) -> Confidence:
    """The calibrated confidence that ``stored`` asks what ``question`` asks."""
    lang = language(question + stored)
    parts, why = features(question, stored, cosine)
    if why:
        return Confidence(0.0, lang, parts, why)
    if parts["equal"]:
        return Confidence(1.0, lang, parts)
    cal = (table or calibrations())[lang]
    return Confidence(cal.probability(parts), lang, parts)


def decide(conf: Confidence, threshold: float, gray: tuple[float, float],
           second: Callable[[], float | None] | None, second_min: float) -> bool:
    """Reuse or not. Inside the gray zone (``gray[0] <= confidence < gray[1]``) a second
    model's cosine, when there is one, decides instead of the threshold: at least
    ``second_min`` reuses. A veto stands whatever the second model says."""
    if conf.veto:
        return False
    if second is not None and gray[0] <= conf.value < gray[1]:
        other = second()
        if other is not None:
            conf.parts["second_cosine"] = float(other)
            return other >= second_min
    return conf.value >= threshold


# --- the learned paraphrase judge (issue 40) -------------------------------------------------
# The vetoes above decide nothing alone here: each kind is a feature, and the fit on
# questions written by other hands says how much it counts ("restore" for "reset" is a
# synonym as often as another action; "revoke" for "grant" never is).
VETO_KINDS = {"attribute": "attribute differs", "action": "action differs",
              "env": "env differs", "values": "values differ", "names": "names differ",
              "modifier": "a modifier only", "empty": "no content words"}
# What the judge reads of one (question, stored question) pair among the nearest pairs.
PAIR_FEATURES: tuple[str, ...] = (
    "cosine", "cosine_gap", "rank", "overlap", "swapped", "extra", "equal", "across",
    "across_cosine", *(f"veto_{k}" for k in VETO_KINDS))


def pair_features(question: str, stored: str, cosine: float, best: float, rank: int
                  ) -> tuple[list[float], dict[str, float], str]:
    """:data:`PAIR_FEATURES` of ``stored`` as the ``rank``-th nearest pair (``best``: the
    nearest's cosine), its signals and its veto (empty: none)."""
    parts, why = features(question, stored, cosine)
    across = float(language(question) != language(stored))
    row = [cosine, best - cosine, float(rank), parts["overlap"], parts["swapped"],
           parts["extra"], parts["equal"], across, across * cosine,
           *(float(why.startswith(prefix)) for prefix in VETO_KINDS.values())]
    return row, parts, why


@dataclass(frozen=True)
class PairJudge:
    """A fitted logistic function of standardised :data:`PAIR_FEATURES`: the probability
    that the stored question asks what the new one asks."""

    model_id: str
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    bias: float
    threshold: float  # the fit's recommended ``faq.reuse_judge_min``
    fitted: str

    def probability(self, row: list[float]) -> float:
        z = self.bias + sum(c * (x - m) / s
                            for x, m, s, c in zip(row, self.mean, self.scale, self.coef))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def to_json(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "features": list(PAIR_FEATURES),
                "mean": list(self.mean), "scale": list(self.scale), "coef": list(self.coef),
                "bias": self.bias, "threshold": self.threshold, "fitted": self.fitted}


@lru_cache(maxsize=4)
def pair_judge(model_id: str) -> PairJudge | None:
    """The paraphrase judge shipped for the embedder ``model_id`` (``faq_judges.json``,
    written by ``training/relevance/train_faq.py``), or None."""
    path = resources.files(__package__).joinpath("faq_judges.json")
    if not path.is_file():
        return None
    for d in json.loads(path.read_text("utf-8")):
        if d["model_id"] == model_id and tuple(d["features"]) == PAIR_FEATURES:
            return PairJudge(d["model_id"], tuple(d["mean"]), tuple(d["scale"]),
                             tuple(d["coef"]), float(d["bias"]), float(d["threshold"]),
                             d["fitted"])
    return None


# The LLM's judgement of a pair (``faq.reuse_judge = "llm"``): the prompt measured with a small
# local model (docs/BENCHMARKS.md, "Scores that add up, and where the encoders stop"). One call
# a pair, answered in one word; a server that ignores the instruction is read as best it can.
SAME_QUESTION_PROMPT = (
    "You decide whether one stored answer can serve two questions. Answer SAME only if both "
    "questions ask for exactly the same information: same person, same place or system, same "
    "document or item, same action (not its opposite), and neither is narrower or broader. "
    "The questions may be in different languages. Otherwise answer DIFFERENT. Reply with one "
    "word: SAME or DIFFERENT.")

_VERDICT_WORD = re.compile(r"same|different", re.IGNORECASE)
_NEGATION = re.compile(r"\bnot\b|n't\b|\bno\b|不", re.IGNORECASE)
_THINKING = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)


def same_question_prompt(stored: str, asked: str) -> str:
    """The user message of :data:`SAME_QUESTION_PROMPT` for a stored and an asked question."""
    return f"Question A: {stored}\nQuestion B: {asked}"


def read_same(answer: str) -> bool | None:
    """The verdict in an answer to :data:`SAME_QUESTION_PROMPT`: True only for a plain SAME
    (the word "same", no "different" and no negation anywhere: "not the same", "they aren't
    the same" are no reuse), False when it says DIFFERENT, None when it says neither. A
    reasoning model's ``<think>`` block is left out. Reuse errs on the side of no."""
    said = _THINKING.sub(" ", answer)
    words = {w.lower() for w in _VERDICT_WORD.findall(said)}
    if not words:
        return None
    return "different" not in words and _NEGATION.search(said) is None
