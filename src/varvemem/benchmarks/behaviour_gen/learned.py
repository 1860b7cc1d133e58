"""The ``learned`` family: agent sessions (turns, tool calls, events) in which something is
learned (a fix, a procedure, a log format, a decision, a rule), asked about afterwards.
"""

from __future__ import annotations

import random
from typing import Any

from .vocabulary import (
    ENVS,
    Case,
)
from .vocabulary import langs as _langs
from .vocabulary import person as _person
from .vocabulary import svc as _svc

# --- learned -------------------------------------------------------------------------------------

PARAMS = [("the connection pool size", "连接池大小", "pool_size"),
          ("the request timeout", "请求超时", "timeout_ms"),
          ("the worker count", "worker 数量", "workers"),
          ("the batch size", "批大小", "batch_size"),
          ("the retry limit", "重试上限", "max_retries")]
SYMPTOMS = [("timeouts", "超时"), ("502 errors", "502 报错"), ("slow responses", "响应变慢"),
            ("OOM kills", "OOM 重启"), ("duplicate messages", "消息重复")]
LOG_FIELDS = ["trace_id", "req_id", "span", "tenant_id", "latency_ms", "lvl", "ts", "caller"]
CHOICES = [("ClickHouse", "BigQuery"), ("NATS", "Kafka"), ("Caddy", "nginx"),
           ("Argo CD", "Flux"), ("Temporal", "Airflow"), ("DuckDB", "Spark")]
DECISION_ROLES = [("analytics store", "分析库"), ("event bus", "事件总线"), ("reverse proxy", "反向代理"),
                  ("deploy tool", "部署工具"), ("job scheduler", "任务调度")]


def _turn(role: str, content: str) -> dict[str, Any]:
    return {"kind": "turn", "role": role, "content": content}


def _story(rng: random.Random, lang: str, kind: str) -> dict[str, Any]:
    z = lang == "zh"
    s = _svc(rng, lang)
    steps: list[dict[str, Any]]
    if kind == "fix":
        pname_en, pname_zh, key = rng.choice(PARAMS)
        sym = rng.choice(SYMPTOMS)[z]
        a = rng.choice([10, 20, 30, 5])
        b = a * rng.choice([3, 4, 5])
        if z:
            steps = [_turn("user", f"{s}从今天早上开始一直{sym}，帮我看看"),
                     {"kind": "tool", "name": "grep_logs", "args": {"service": s},
                      "result": f"ERROR {key} exhausted ({a}/{a})"},
                     _turn("assistant", f"日志里 {key} 用满了，{pname_zh}太小。"),
                     _turn("user", f"把{pname_zh}从 {a} 调到 {b} 之后就好了，改的是 config.yaml 里的 {key}"),
                     _turn("user", "好了，谢谢")]
            q = rng.choice([f"{s}的{sym}当时是怎么解决的？", f"上次{s}{sym}怎么修好的"])
        else:
            steps = [_turn("user", f"The {s} keeps throwing {sym} since this morning, can you look?"),
                     {"kind": "tool", "name": "grep_logs", "args": {"service": s},
                      "result": f"ERROR {key} exhausted ({a}/{a})"},
                     _turn("assistant", f"The logs say {key} is exhausted, {pname_en} is too small."),
                     _turn("user", f"Raising {pname_en} from {a} to {b} ({key} in config.yaml) sorted it out."),  # noqa: E501 (a sentence reads best whole)
                     _turn("user", "all good now, thanks")]
            q = rng.choice([f"How did we fix the {sym} in the {s}?", f"what solved the {s} {sym}?"])
        return {"steps": steps, "question": q, "expect": [str(b)], "learned_step": 3}
    if kind == "procedure":
        steps_en = ["drain the traffic in the load balancer", "run make rotate-secrets",
                    "restart the pods one by one", "check the health endpoint"]
        steps_zh = ["先在负载均衡上摘流量", "执行 make rotate-secrets", "逐个重启 pod", "最后检查健康接口"]
        k = rng.choice(["credentials", "certificates", "database password"])
        kz = {"credentials": "凭证", "certificates": "证书", "database password": "数据库密码"}[k]
        if z:
            steps = [_turn("user", f"{s}的{kz}要轮换了，之前没做过"),
                     _turn("assistant", "我查一下运维手册。"),
                     {"kind": "tool", "name": "search_wiki", "args": {"q": f"{s} {kz}"},
                      "result": "runbook found"},
                     _turn("user", f"搞定了，{s}轮换{kz}的流程：{'，然后'.join(steps_zh)}。"),
                     _turn("assistant", "好的，已记下。")]
            q = f"{s}的{kz}怎么轮换？"
        else:
            steps = [_turn("user", f"We need to rotate the {s} {k}, never done it before."),
                     _turn("assistant", "Let me check the runbook."),
                     {"kind": "tool", "name": "search_wiki", "args": {"q": f"{s} {k}"},
                      "result": "runbook found"},
                     _turn("user", f"Done. The way to rotate the {s} {k}: {', then '.join(steps_en)}."),
                     _turn("assistant", "Great, noted.")]
            q = f"How do I rotate the {s} {k}?"
        return {"steps": steps, "question": q, "expect": ["rotate-secrets"], "learned_step": 3}
    if kind == "log_format":
        f1, f2, f3 = rng.sample(LOG_FIELDS, 3)
        if z:
            steps = [_turn("user", f"新上线的{s}日志我看不懂"),
                     {"kind": "tool", "name": "tail_logs", "args": {"service": s},
                      "result": f'{{"{f1}": "...", "{f2}": "...", "{f3}": 12}}'},
                     _turn("assistant", f"{s}的日志是 JSON 行格式，字段有 {f1}、{f2}、{f3}，请求 ID 在 {f2} 里。"),  # noqa: E501 (a sentence reads best whole)
                     _turn("user", "明白了")]
            q = rng.choice([f"{s}的日志是什么格式？", f"{s}日志里请求 ID 在哪个字段"])
        else:
            steps = [_turn("user", f"I can't read the logs of the new {s}."),
                     {"kind": "tool", "name": "tail_logs", "args": {"service": s},
                      "result": f'{{"{f1}": "...", "{f2}": "...", "{f3}": 12}}'},
                     _turn("assistant", f"The {s} logs are JSON lines with the fields {f1}, {f2} and {f3}; the request id is in {f2}."),  # noqa: E501 (a sentence reads best whole)
                     _turn("user", "got it")]
            q = rng.choice([f"What format do the {s} logs use?", f"which field holds the request id in the {s} logs?"])  # noqa: E501 (a sentence reads best whole)
        return {"steps": steps, "question": q, "expect": [f2], "learned_step": 2}
    if kind == "decision":
        choice, alt = rng.choice(CHOICES)
        role_en, role_zh = rng.choice(DECISION_ROLES)
        if z:
            steps = [_turn("user", f"{s}的{role_zh}选型讨论一下：{choice} 还是 {alt}？"),
                     _turn("assistant", f"{alt} 更成熟，{choice} 运维更简单。"),
                     {"kind": "event", "event": {"title": "架构评审", "service": s, "status": "done"}},
                     _turn("user", f"评审结论：{s}的{role_zh}用 {choice}，不用 {alt}，因为运维成本低。"),
                     _turn("assistant", "收到。")]
            q = f"{s}的{role_zh}最后选了什么？"
        else:
            steps = [_turn("user", f"Let's settle the {role_en} for the {s}: {choice} or {alt}?"),
                     _turn("assistant", f"{alt} is more mature, {choice} is simpler to run."),
                     {"kind": "event", "event": {"title": "architecture review", "service": s, "status": "done"}},  # noqa: E501 (a sentence reads best whole)
                     _turn("user", f"Decision from the review: the {s} goes with {choice} as its {role_en}, not {alt}, because it is cheaper to operate."),  # noqa: E501 (a sentence reads best whole)
                     _turn("assistant", "Noted.")]
            q = f"What did we pick as the {role_en} for the {s}?"
        return {"steps": steps, "question": q, "expect": [choice], "learned_step": 3}
    # a rule
    env = rng.choice(ENVS)
    person = _person(rng, lang)
    if z:
        steps = [{"kind": "event", "event": {"title": "发布失败", "service": s, "status": "failed"}},
                 _turn("user", f"{env[1]}环境又被未审批的发布搞挂了"),
                 _turn("user", f"以后往{env[1]}发布都必须先经过{person}审批。"),
                 _turn("assistant", "明白，我会提醒大家。")]
        q = rng.choice([f"往{env[1]}发布要谁审批？", f"{env[1]}环境发版需要谁批准"])
    else:
        steps = [{"kind": "event", "event": {"title": "deploy failed", "service": s, "status": "failed"}},
                 _turn("user", f"An unapproved deploy broke {env[0]} again."),
                 _turn("user", f"Every deploy to {env[0]} needs {person}'s approval first."),
                 _turn("assistant", "Understood, I'll remind the team.")]
        q = rng.choice([f"Who has to approve deploys to {env[0]}?", f"who signs off {env[0]} deploys"])
    return {"steps": steps, "question": q, "expect": [person], "learned_step": 2}


STORY_KINDS = ["fix", "procedure", "log_format", "decision", "rule"]


def gen_learned(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        kind = STORY_KINDS[i // 2 % len(STORY_KINDS)]
        story = _story(rng, lang, kind)
        others = [k for k in STORY_KINDS if k != kind]
        story["noise"] = [_story(rng, lang, k)["steps"] for k in rng.sample(others, 2)]
        story["kind"] = kind
        out.append({"family": "learned", "lang": lang, "id": f"learned-{i}", "data": story})
    return out
