"""The behaviour benchmark's template cases: many subjects, values and phrasings, in Chinese and
English, drawn by a seeded ``random.Random`` (the same seed gives the same cases).

Each generator returns case dicts ``{"family", "lang", "id", "data"}``; ``data`` has the same
shape as the hand-written cases in ``behaviour_cases.json`` (see :mod:`.behaviour`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

Case = dict[str, Any]

# --- shared vocabulary ---------------------------------------------------------------------------

# (English, Chinese) names of the same system, so a fact can be asked in the other language.
SERVICES: list[tuple[str, str]] = [
    ("payments service", "支付服务"), ("order service", "订单服务"), ("user center", "用户中心"),
    ("API gateway", "API 网关"), ("search service", "搜索服务"),
    ("recommendation service", "推荐服务"), ("risk control service", "风控服务"),
    ("push notification service", "消息推送服务"), ("inventory service", "库存服务"),
    ("settlement system", "结算系统"), ("auth service", "认证服务"),
    ("billing worker", "计费任务"), ("report generator", "报表服务"),
    ("image resizer", "图片处理服务"), ("log pipeline", "日志管道"),
    ("data warehouse", "数据仓库"), ("customer portal", "客户门户"),
    ("admin console", "管理后台"), ("mobile backend", "移动端后端"),
    ("email sender", "邮件发送服务"), ("coupon service", "优惠券服务"),
    ("shipping tracker", "物流跟踪服务"), ("chat service", "客服聊天服务"),
    ("video transcoder", "视频转码服务"),
]
COMPONENTS: list[tuple[str, str]] = [
    ("Kafka", "Kafka"), ("Redis", "Redis"), ("PostgreSQL", "PostgreSQL"), ("nginx", "nginx"),
    ("Elasticsearch", "Elasticsearch"), ("the Java runtime", "Java 运行时"),
    ("Node.js", "Node.js"), ("the ingress controller", "Ingress 控制器"),
    ("Prometheus", "Prometheus"), ("Grafana", "Grafana"), ("Airflow", "Airflow"),
]
ENVS: list[tuple[str, str]] = [("staging", "预发"), ("production", "生产"), ("test", "测试"),
                               ("dev", "开发"), ("canary", "灰度")]
PEOPLE_EN = ["Alice", "Bob", "Priya", "Marta", "Kenji", "Omar", "Lena", "Diego", "Sofia",
             "Tomasz", "Grace", "Ravi", "Hana", "Lucas", "Nadia", "Ivan"]
PEOPLE_ZH = ["张伟", "李娜", "王磊", "刘洋", "陈静", "杨帆", "赵敏", "黄涛", "周杰", "吴芳",
             "徐强", "孙丽", "马超", "朱琳", "胡斌", "郭蕾"]
EDITORS = ["VS Code", "Vim", "Emacs", "Neovim", "IntelliJ IDEA", "Zed", "Sublime Text",
           "PyCharm", "Helix"]
CITIES: list[tuple[str, str]] = [("Berlin", "柏林"), ("Shanghai", "上海"), ("Lisbon", "里斯本"),
                                 ("Chengdu", "成都"), ("Toronto", "多伦多"), ("Hangzhou", "杭州"),
                                 ("Madrid", "马德里"), ("Shenzhen", "深圳"), ("Oslo", "奥斯陆"),
                                 ("Wuhan", "武汉"), ("Kyoto", "京都"), ("Nanjing", "南京")]
REGIONS = ["eu-west-1", "us-east-2", "ap-southeast-1", "cn-hangzhou", "cn-beijing",
           "eu-central-1", "us-west-2", "ap-northeast-1"]
DAYS: list[tuple[str, str]] = [("Monday", "周一"), ("Tuesday", "周二"), ("Wednesday", "周三"),
                               ("Thursday", "周四"), ("Friday", "周五")]
CACHES = ["Redis", "Memcached", "Hazelcast", "KeyDB", "Dragonfly"]
QUEUES = ["Kafka", "RabbitMQ", "NATS", "Pulsar", "SQS", "RocketMQ"]


def _pair(rng: random.Random, make: Callable[[random.Random], str]) -> tuple[str, str]:
    old = make(rng)
    new = make(rng)
    while new == old:
        new = make(rng)
    return old, new


def _host(rng: random.Random) -> str:
    return rng.choice(["pg-{n}", "pg-main-{n}", "db-{n}", "mysql-{n}", "pg{n}-replica",
                       "tidb-{n}"]).format(n=rng.randint(1, 12))


def _cluster(rng: random.Random) -> str:
    return rng.choice(["eks-stg-{n}", "gke-prod-{n}", "aks-west-{n}", "k8s-{n}", "ack-hz-{n}",
                       "eks-{n}b"]).format(n=rng.randint(1, 9))


def _version(rng: random.Random) -> str:
    return rng.choice(["{a}.{b}.{c}", "v{a}.{b}", "{a}.{b}"]).format(
        a=rng.randint(1, 9), b=rng.randint(0, 30), c=rng.randint(0, 12))


def _port(rng: random.Random) -> str:
    return str(rng.choice([8080, 8081, 8443, 9090, 9000, 3000, 5000, 7070, 6060, 8888, 4000,
                           9443, 10080]))


def _mem(rng: random.Random) -> str:
    return rng.choice(["256Mi", "512Mi", "768Mi", "1Gi", "2Gi", "3Gi", "4Gi", "6Gi", "8Gi"])


def _branch(rng: random.Random) -> str:
    return rng.choice(["release/2026.{n}", "rel-{n}.x", "stable-{n}", "main-{n}"]).format(
        n=rng.randint(1, 12))


def _channel(rng: random.Random) -> str:
    return rng.choice(["#ops-alerts", "#payments-oncall", "#sre", "#infra-pager", "#db-team",
                       "#release-watch", "#noc", "#backend-alerts"])


# One attribute of a subject: how people state it (no update cue words: those belong to the
# transition family), how they ask about it, and how its values look.
# ``s`` is the subject in the sentence's language, ``S`` the same capitalised.
ATTRS: list[dict[str, Any]] = [
    {"key": "db", "values": _host,
     "en": ["{S} runs on {v}.", "{S} is on {v}", "The database for {s} is {v}.",
            "{S} uses the {v} database", "fyi {s} sits on {v}", "{s} -> database {v}",
            "The {s} talks to {v} for storage."],
     "zh": ["{s}跑在 {v} 上", "{s}用的数据库是 {v}", "{s}的库在 {v}", "{s}连的是 {v} 这台数据库",
            "{s}的数据存在 {v} 上。", "{s}数据库：{v}"],
     "q_en": ["Which database does {s} run on?", "where does {s} store its data",
              "What is the database host of {s}?"],
     "q_zh": ["{s}跑在哪个数据库上？", "{s}的数据库是哪台", "{s}连的哪个库？"],
     "np_en": "the {s} database", "np_zh": "{s}的数据库"},
    {"key": "cluster", "values": _cluster,
     "en": ["{S} is deployed to the {v} cluster.", "{S} lives in cluster {v}",
            "The cluster for {s} is {v}", "We run {s} on {v}.", "{s} cluster: {v}"],
     "zh": ["{s}部署在 {v} 集群", "{s}所在的集群是 {v}", "{s}跑在 {v} 这个集群上",
            "{s}的集群：{v}", "{s}放在 {v} 集群里。"],
     "q_en": ["Which cluster is {s} deployed to?", "what cluster runs {s}?",
              "Where is {s} deployed?"],
     "q_zh": ["{s}部署在哪个集群？", "{s}在哪个集群上跑", "{s}用的是哪个集群？"],
     "np_en": "the {s} cluster", "np_zh": "{s}的集群"},
    {"key": "port", "values": _port,
     "en": ["{S} listens on port {v}.", "{S} serves on port {v}", "The port of {s} is {v}",
            "{s} binds to :{v}", "{S} answers on {v}."],
     "zh": ["{s}监听端口 {v}", "{s}的端口是 {v}", "{s}开在 {v} 端口上", "{s}端口：{v}",
            "{s}对外暴露 {v} 端口。"],
     "q_en": ["Which port does {s} listen on?", "what port is {s} on", "{S} port?"],
     "q_zh": ["{s}监听哪个端口？", "{s}的端口是多少", "{s}用哪个端口？"],
     "np_en": "the {s} port", "np_zh": "{s}的端口"},
    {"key": "memory", "values": _mem,
     "en": ["The memory limit for {s} pods is {v}.", "{S} pods get {v} of memory",
            "{S} memory limit: {v}", "We give {s} {v} of RAM per pod."],
     "zh": ["{s}的内存上限是 {v}", "{s}每个 pod 给 {v} 内存", "{s}内存限制：{v}",
            "{s}的 pod 内存配额为 {v}。"],
     "q_en": ["What is the memory limit of {s}?", "how much memory do {s} pods get?",
              "{S} RAM limit?"],
     "q_zh": ["{s}的内存上限是多少？", "{s}的 pod 给多少内存", "{s}内存限制是多少？"],
     "np_en": "the {s} memory limit", "np_zh": "{s}的内存上限"},
    {"key": "branch", "values": _branch,
     "en": ["The release branch of {s} is {v}.", "{S} ships from {v}",
            "{S} releases are cut from {v}", "release branch for {s}: {v}"],
     "zh": ["{s}的发布分支是 {v}", "{s}从 {v} 分支发版", "{s}发布用 {v} 分支。",
            "{s}发布分支：{v}"],
     "q_en": ["Which branch does {s} release from?", "what is the release branch of {s}?",
              "{S} release branch?"],
     "q_zh": ["{s}从哪个分支发布？", "{s}的发布分支是哪个", "{s}发版用什么分支？"],
     "np_en": "the {s} release branch", "np_zh": "{s}的发布分支"},
    {"key": "alerts", "values": _channel,
     "en": ["Alerts for {s} go to {v}.", "{S} pages {v}", "{S} alerts land in {v}",
            "The alert channel of {s} is {v}."],
     "zh": ["{s}的告警发到 {v}", "{s}告警进 {v} 频道", "{s}的报警频道是 {v}。",
            "{s}出问题会通知 {v}"],
     "q_en": ["Where do alerts for {s} go?", "which channel gets {s} alerts?",
              "{S} alert channel?"],
     "q_zh": ["{s}的告警发到哪里？", "{s}告警进哪个频道", "{s}报警通知哪个群？"],
     "np_en": "the {s} alert channel", "np_zh": "{s}的告警频道"},
    {"key": "region", "values": lambda rng: rng.choice(REGIONS),
     "en": ["{S} is hosted in {v}.", "{S} runs in region {v}", "The region of {s} is {v}",
            "{s} region: {v}"],
     "zh": ["{s}部署在 {v} 区域", "{s}在 {v} 地域", "{s}的区域是 {v}。", "{s}所在地域：{v}"],
     "q_en": ["Which region is {s} hosted in?", "what region does {s} run in?",
              "{S} region?"],
     "q_zh": ["{s}部署在哪个区域？", "{s}在哪个地域", "{s}是哪个区？"],
     "np_en": "the {s} region", "np_zh": "{s}的区域"},
    {"key": "owner", "values": None,  # people: per language
     "en": ["{v} owns {s}.", "{S} is owned by {v}", "The owner of {s} is {v}",
            "{v} is the person to ask about {s}.", "{s} owner: {v}"],
     "zh": ["{s}的负责人是{v}", "{s}归{v}管", "{v}负责{s}", "{s}有问题找{v}。", "{s}负责人：{v}"],
     "q_en": ["Who owns {s}?", "who is responsible for {s}", "Who should I ask about {s}?"],
     "q_zh": ["{s}归谁负责？", "{s}的负责人是谁", "{s}有问题找谁？"],
     "np_en": "the owner of {s}", "np_zh": "{s}的负责人"},
]

# Versions of a component per environment (staging vs production must stay distinct).
VERSION_EN = ["{c} in {e} is at version {v}.", "{e} runs {c} {v}", "{c} version on {e}: {v}",
              "We have {c} {v} in {e}."]
VERSION_ZH = ["{e}环境的 {c} 版本是 {v}", "{e}上跑的是 {c} {v}", "{e} {c} 版本：{v}",
              "{e}环境用的 {c} 是 {v}。"]
VERSION_Q_EN = ["What version of {c} runs in {e}?", "which {c} version is on {e}?"]
VERSION_Q_ZH = ["{e}环境的 {c} 是什么版本？", "{e}上 {c} 是哪个版本"]


def _person(rng: random.Random, lang: str) -> str:
    return rng.choice(PEOPLE_EN if lang == "en" else PEOPLE_ZH)


def _values(attr: dict[str, Any], rng: random.Random, lang: str) -> tuple[str, str]:
    if attr["values"] is None:
        return _pair(rng, lambda r: _person(r, lang))
    return _pair(rng, attr["values"])


def _fill(template: str, s: str, v: str = "") -> str:
    cap = s[:1].upper() + s[1:]
    return template.format(s=s, S=cap, v=v)


def _svc(rng: random.Random, lang: str) -> str:
    en, zh = rng.choice(SERVICES)
    if lang == "en":
        return en if rng.random() < 0.7 else f"the {en}"
    return zh


def _langs(n: int) -> list[str]:
    return ["en" if i % 2 == 0 else "zh" for i in range(n)]


# --- update: a new value without a cue word ----------------------------------------------------

def gen_update(rng: random.Random, n: int) -> list[Case]:
    out = []
    modes = ["knowledge", "dialogue", "event"]
    for i, lang in enumerate(_langs(n)):
        attr = rng.choice(ATTRS)
        s = _svc(rng, lang)
        old, new = _values(attr, rng, lang)
        t_old, t_new = rng.choice(attr[lang]), rng.choice(attr[lang])  # often two phrasings
        out.append({"family": "update", "lang": lang, "id": f"update-{i}", "data": {
            "mode": modes[i // 2 % 3], "attr": attr["key"],
            "old": _fill(t_old, s, old), "new": _fill(t_new, s, new),
            "old_value": old, "new_value": new,
            "query": _fill(rng.choice(attr["q_" + lang]), s),
            "gap_hours": rng.choice([1, 5, 26, 72, 240])}})
    return out


# --- transition and negation -----------------------------------------------------------------

TRANSITION_EN = ["We moved {np} from {a} to {b}.", "{NP}: {a} → {b}", "{NP} moved from {a} to {b}",
                 "Replaced {a} with {b} for {np}.", "Migrated {np} to {b}.",
                 "{NP} switched from {a} to {b} this morning.", "{NP} is {b} instead of {a}",
                 "{NP} changed from {a} to {b}.", "{a} -> {b} for {np}", "{NP} is {b} now",
                 "Heads up: {np} went from {a} to {b}.", "{NP} was cut over from {a} to {b}"]
TRANSITION_ZH = ["{np}从{a}迁到{b}了", "{np}由{a}改为{b}", "{np}换成{b}了", "{np}：{a} → {b}",
                 "把{np}从{a}替换成了{b}", "{np}已经迁移到{b}", "{np}改成{b}了，不是{a}",
                 "{np}现在是{b}", "{np}从{a}切到了{b}", "{a} 已下线，{np}改用{b}",
                 "通知：{np}由{a}调整为{b}。", "{np}已从{a}换到{b}"]

NEG_OLD_EN = ["{S} uses {a} for {role}.", "{S} relies on {a} for {role}",
              "For {role}, {s} uses {a}."]
NEG_OLD_ZH = ["{s}用{a}做{role}", "{s}的{role}用的是{a}", "{s}依赖{a}做{role}。"]
NEG_EN = ["{S} no longer uses {a}.", "{S} doesn't use {a} anymore", "We stopped using {a} in {s}.",
          "{S} has dropped {a}.", "{a} is no longer used by {s}",
          "{S} does not depend on {a} any more.", "We retired {a} from {s}."]
NEG_ZH = ["{s}不再用{a}", "{s}已经不用{a}了", "{s}停用了{a}", "{s}去掉了对{a}的依赖",
          "{a}已经从{s}里下掉了", "{s}不再依赖{a}。", "{s}里的{a}废弃了"]
ROLES: list[tuple[str, str, list[str]]] = [("caching", "缓存", CACHES), ("messaging", "消息队列", QUEUES)]
NEG_Q_EN = ["What does {s} use for {role}?", "Does {s} use {a}?", "which {role} does {s} use"]
NEG_Q_ZH = ["{s}用什么做{role}？", "{s}还用{a}吗？", "{s}的{role}是什么"]


def gen_transition(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        attr = rng.choice(ATTRS)
        s = _svc(rng, lang)
        a, b = _values(attr, rng, lang)
        np_ = _fill(attr["np_" + lang], s)
        tpl = rng.choice(TRANSITION_EN if lang == "en" else TRANSITION_ZH)
        new = tpl.format(np=np_, NP=np_[:1].upper() + np_[1:], a=a, b=b)
        out.append({"family": "transition", "lang": lang, "id": f"transition-{i}", "data": {
            "mode": "knowledge" if i % 3 else "dialogue", "attr": attr["key"],
            "old": _fill(rng.choice(attr[lang]), s, a), "new": new,
            "old_value": a, "new_value": b,
            "query": _fill(rng.choice(attr["q_" + lang]), s), "gap_hours": rng.choice([2, 30, 200])}})
    return out



def gen_after_change(rng: random.Random, n: int) -> list[Case]:
    """A change stated first ("Migrated X to A.", "X换成A了"), then the thing's value given
    plainly, without a cue word ("X is B"): the change's A is the old value."""
    out = []
    for i, lang in enumerate(_langs(n)):
        attr = rng.choice(ATTRS)
        s = _svc(rng, lang)
        z, a = _values(attr, rng, lang)
        b = a
        while b in (z, a):
            b = _values(attr, rng, lang)[0]
        np_ = _fill(attr["np_" + lang], s)
        tpl = rng.choice(TRANSITION_EN if lang == "en" else TRANSITION_ZH)
        old = tpl.format(np=np_, NP=np_[:1].upper() + np_[1:], a=z, b=a)
        out.append({"family": "after_change", "lang": lang, "id": f"after_change-{i}", "data": {
            "mode": "knowledge" if i % 3 else "dialogue", "attr": attr["key"],
            "old": old, "new": _fill(rng.choice(attr[lang]), s, b),
            "old_value": a, "new_value": b,
            "query": _fill(rng.choice(attr["q_" + lang]), s), "gap_hours": rng.choice([2, 30, 200])}})
    return out

def gen_negation(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        role_en, role_zh, pool = rng.choice(ROLES)
        role = role_en if lang == "en" else role_zh
        a = rng.choice(pool)
        s = _svc(rng, lang)
        cap = s[:1].upper() + s[1:]
        old = rng.choice(NEG_OLD_EN if lang == "en" else NEG_OLD_ZH).format(
            s=s, S=cap, a=a, role=role)
        new = rng.choice(NEG_EN if lang == "en" else NEG_ZH).format(s=s, S=cap, a=a)
        q = rng.choice(NEG_Q_EN if lang == "en" else NEG_Q_ZH).format(s=s, a=a, role=role)
        out.append({"family": "negation", "lang": lang, "id": f"negation-{i}", "data": {
            "mode": "knowledge" if i % 3 else "dialogue", "old": old, "new": new,
            "old_value": a, "new_value": None, "query": q, "gap_hours": rng.choice([3, 48])}})
    return out


# --- distinct: must not supersede or merge ---------------------------------------------------

PREF_EN = ["My favourite editor is {v}.", "I use {v} for coding", "I write code in {v}"]
PREF_ZH = ["我最喜欢的编辑器是{v}", "我平时用{v}写代码", "我写代码用{v}。"]
CITY_EN = ["I live in {v}.", "I'm based in {v}", "home for me is {v}"]
CITY_ZH = ["我住在{v}", "我现在在{v}生活", "我家在{v}。"]
INVOICE_EN = ["Invoice {id} from {vendor}: {amount} EUR, due {date}.",
              "Received invoice {id} ({vendor}) for {amount} EUR, payable by {date}"]
INVOICE_ZH = ["发票 {id}，{vendor}，金额 {amount} 元，{date}到期", "收到{vendor}的发票 {id}，{amount} 元，{date}前付款"]  # noqa: E501 (a sentence reads best whole)
VENDORS_EN = ["ACME GmbH", "Northwind", "Globex", "Initech", "Umbrella Ltd", "Hooli", "Stark Supplies"]
VENDORS_ZH = ["华信科技", "顺达物流", "云图数据", "明远咨询", "东方印务", "新启软件", "恒通电子"]
TICKET_EN = ["Ticket {id}: disk almost full on {host}.", "{id} opened: {host} is out of inodes",
             "Ticket {id} - certificate on {host} expires soon"]
TICKET_ZH = ["工单 {id}：{host} 磁盘快满了", "{id} 已创建：{host} 内存告警", "工单 {id}，{host} 证书即将过期"]
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]


def _date(rng: random.Random, lang: str) -> str:
    m, d = rng.randint(1, 12), rng.randint(1, 28)
    return f"{d} {MONTHS_EN[m - 1]} 2026" if lang == "en" else f"2026年{m}月{d}日"


def gen_distinct(rng: random.Random, n: int) -> list[Case]:
    out = []
    kinds = ["subjects", "users", "environments", "id", "amount", "date", "ticket"]
    for i, lang in enumerate(_langs(n)):
        kind = kinds[i // 2 % len(kinds)]
        recs: list[dict[str, Any]] = []
        if kind == "subjects":
            attr = rng.choice(ATTRS)
            tpl = rng.choice(attr[lang])
            names = rng.sample(SERVICES, 2)
            v1, v2 = _values(attr, rng, lang)
            for (en, zh), v in zip(names, (v1, v2)):
                recs.append({"content": _fill(tpl, en if lang == "en" else zh, v)})
        elif kind == "users":
            tpls, pool = rng.choice([(PREF_EN if lang == "en" else PREF_ZH, EDITORS),
                                     (CITY_EN if lang == "en" else CITY_ZH,
                                      [c[0] if lang == "en" else c[1] for c in CITIES])])
            tpl = rng.choice(tpls)
            for u, v in zip(("u-ann", "u-bo"), rng.sample(pool, 2)):
                recs.append({"content": tpl.format(v=v), "user": u})
        elif kind == "environments":
            c = rng.choice(COMPONENTS)[0 if lang == "en" else 1]
            tpl = rng.choice(VERSION_EN if lang == "en" else VERSION_ZH)
            envs = rng.sample(ENVS, 2)
            v1, v2 = _pair(rng, _version)
            for e, v in zip(envs, (v1, v2)):
                recs.append({"content": tpl.format(c=c, e=e[0] if lang == "en" else e[1], v=v)})
        elif kind == "ticket":
            tpl = rng.choice(TICKET_EN if lang == "en" else TICKET_ZH)
            host = rng.choice(["web-{n}", "db-{n}", "cache-{n}", "node-{n}"]).format(
                n=rng.randint(1, 40))
            base = rng.randint(1000, 9000)
            prefix = rng.choice(["OPS", "INC", "SUP", "IT"])
            for k in range(3):
                recs.append({"content": tpl.format(id=f"{prefix}-{base + k}", host=host)})
        else:  # invoices that differ only in their id, their amount or their date
            tpl = rng.choice(INVOICE_EN if lang == "en" else INVOICE_ZH)
            vendor = rng.choice(VENDORS_EN if lang == "en" else VENDORS_ZH)
            num = rng.randint(1000, 9000)
            inv = rng.choice(["INV-{n}", "{n}", "FP{n}", "NO.{n}"])
            amount = rng.choice([120, 480, 1200, 3150, 990, 75, 2400])
            date = _date(rng, lang)
            for k in range(2):
                fields = {"id": inv.format(n=num), "vendor": vendor, "amount": str(amount),
                          "date": date}
                if kind == "id":
                    fields["id"] = inv.format(n=num + k)
                elif kind == "amount":
                    fields["amount"] = str(amount + k * rng.choice([10, 100, 1]))
                else:
                    fields["date"] = date if k == 0 else _date(rng, lang)
                    while k and fields["date"] == date:
                        fields["date"] = _date(rng, lang)
                recs.append({"content": tpl.format(**fields)})
        out.append({"family": "distinct", "lang": lang, "id": f"distinct-{i}",
                    "data": {"kind": kind, "records": recs}})
    return out


# --- near duplicates ---------------------------------------------------------------------------

def full_width(text: str) -> str:
    """ASCII letters, digits and punctuation as their full-width forms (space as U+3000)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else ("\u3000" if c == " " else c)
                   for c in text)


def _restate(rng: random.Random, text: str, lang: str, kind: str) -> str:
    if kind == "case":
        return text.upper() if rng.random() < 0.4 else (
            text.lower() if text != text.lower() else text.title())
    if kind == "width":
        return full_width(text)
    if kind == "punct":
        stripped = text.rstrip(".。?？!！")
        if stripped != text:
            tail = text[len(stripped):]
            swap = {".": "。", "。": ".", "?": "？", "？": "?", "!": "！", "！": "!"}
            return stripped + ("" if rng.random() < 0.5 else "".join(swap.get(c, c) for c in tail))
        return text + ("." if lang == "en" else rng.choice(["。", "！"]))
    if kind == "spacing":
        if lang == "zh" and " " in text:
            return text.replace(" ", "")
        if lang == "zh":
            return text.replace("，", "， ") if "，" in text else f" {text} "
        return "  ".join(text.split(" ")) + " "
    # a particle at the end (Chinese)
    stripped = text.rstrip("。？！?!.")
    return stripped + rng.choice(["吧", "了", "呢", "啊", "哦"]) + text[len(stripped):]


FAQ_VERBS: list[tuple[str, str]] = [
    ("reset", "重置"), ("delete", "删除"), ("export", "导出"), ("rename", "重命名"),
    ("share", "共享"), ("back up", "备份"), ("restore", "恢复"), ("disable", "停用"),
    ("transfer", "转移"), ("renew", "续期"), ("archive", "归档"), ("lock", "锁定"),
]
FAQ_OBJECTS: list[tuple[str, str]] = [
    ("password", "密码"), ("API key", "API 密钥"), ("workspace", "工作区"), ("project", "项目"),
    ("invoice", "发票"), ("billing address", "账单地址"), ("SSH key", "SSH 密钥"),
    ("team", "团队"), ("dashboard", "仪表盘"), ("webhook", "Webhook"), ("database", "数据库"),
    ("subscription", "订阅"), ("calendar", "日历"), ("domain", "域名"),
]
FAQ_Q_EN = "How do I {v} my {o}?"
FAQ_Q_ZH = "怎么{v}{o}？"
FAQ_PARA_EN = ["How can I {v} my {o}?", "What's the way to {v} a {o}?", "how to {v} {o}",
               "I need to {v} my {o}, how?", "Is there a way to {v} my {o}?",
               "what are the steps to {v} the {o}?", "how do i {v} my {o}"]
FAQ_PARA_ZH = ["如何{v}{o}？", "{o}怎么{v}？", "我想{v}{o}，该怎么做？", "{v}{o}的步骤是什么？",
               "请问{o}要怎么{v}", "有办法{v}{o}吗？", "{o}如何{v}"]
FAQ_A_EN = "Open Settings → {O}, then choose “{V}” and confirm."
FAQ_A_ZH = "在 设置 → {o} 页面点击「{v}」并确认。"


def _near_qa(rng: random.Random, lang: str) -> str:
    v, o = rng.choice(FAQ_VERBS), rng.choice(FAQ_OBJECTS)
    return (FAQ_Q_EN if lang == "en" else FAQ_Q_ZH).format(v=v[lang == "zh"], o=o[lang == "zh"])


def gen_near_duplicate(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        kinds = ["case", "width", "punct", "spacing"] if lang == "en" else \
            ["width", "punct", "spacing", "particle"]
        kind = kinds[i // 2 % len(kinds)]
        target = "qa" if (i // 8) % 3 == 2 else "memory"
        if target == "qa":
            text = _near_qa(rng, lang)
        else:
            attr = rng.choice(ATTRS)
            text = _fill(rng.choice(attr[lang]), _svc(rng, lang), _values(attr, rng, lang)[0])
        other = _restate(rng, text, lang, kind)
        if other == text:  # e.g. upper case of a text without letters
            other = full_width(text)
        data: dict[str, Any] = {"kind": kind, "target": target, "a": text, "b": other}
        if target == "qa":
            data["answer"] = "See the runbook." if lang == "en" else "见运维手册。"
        out.append({"family": "near_duplicate", "lang": lang, "id": f"near_duplicate-{i}",
                    "data": data})
    return out


# --- faq_reuse ---------------------------------------------------------------------------------

def gen_faq_reuse(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        z = lang == "zh"
        pairs = []
        verbs = rng.sample(FAQ_VERBS, 4)
        objs = rng.sample(FAQ_OBJECTS, 3)
        for v, o in zip(verbs, objs):
            pairs.append({"question": (FAQ_Q_ZH if z else FAQ_Q_EN).format(v=v[z], o=o[z]),
                          "answer": (FAQ_A_ZH if z else FAQ_A_EN).format(
                              v=v[z], o=o[z], V=v[0].title(), O=o[0].title()),
                          "score": rng.choice([0.8, 0.85, 0.9, 0.95])})
        v0, o0 = verbs[0], objs[0]
        if i % 3 == 2:  # same topic, a different question: nothing stored answers it
            probe = (FAQ_Q_ZH if z else FAQ_Q_EN).format(v=verbs[3][z], o=o0[z])
            if rng.random() < 0.5:
                probe = rng.choice(FAQ_PARA_ZH if z else FAQ_PARA_EN).format(v=verbs[3][z], o=o0[z])
            expect = None
        else:
            probe = rng.choice(FAQ_PARA_ZH if z else FAQ_PARA_EN).format(v=v0[z], o=o0[z])
            expect = 0
        out.append({"family": "faq_reuse", "lang": lang, "id": f"faq_reuse-{i}",
                    "data": {"pairs": pairs, "probe": probe, "expect": expect}})
    return out


# --- chit_chat -----------------------------------------------------------------------------------

CHAT_EN = ["hi", "hello", "hey", "hey there", "good morning", "good evening", "thanks",
           "thank you", "thank you so much", "thanks a lot", "many thanks", "thx", "ty",
           "cheers", "ok thanks", "ok, thank you", "great, thanks", "bye", "goodbye",
           "see you", "see you later", "talk to you later", "have a nice day", "ok", "okay",
           "got it", "sounds good", "cool", "perfect", "awesome, thanks", "nice one",
           "thanks, that helped", "all good", "you're the best", "much appreciated", "bye bye"]
CHAT_ZH = ["你好", "你好啊", "您好", "嗨", "哈喽", "早上好", "晚上好", "谢谢", "谢谢啦", "谢谢你",
           "多谢", "多谢多谢", "感谢", "非常感谢", "太感谢了", "辛苦了", "再见", "再见啦", "拜拜",
           "回头见", "明天见", "好的", "好的好的", "嗯嗯", "收到", "知道了", "明白了", "行", "可以",
           "没问题", "好嘞", "OK", "谢啦", "感谢帮忙", "好的谢谢", "晚安"]
DECOR_EN = ["", "!", "!!", ".", " :)", " 🙏", "~", "?"]
DECOR_ZH = ["", "！", "!", "～", "~", "。", "😊", "啊", "呀", "！！"]
REAL_EN = ["hi, how do I {v} my {o}?", "thanks! one more thing: where are the logs of {s}?",
           "ok, and which port does {s} use?", "cheers, but how do I roll back {s}?",
           "hello, is {s} down?", "thanks, why did {s} fail last night?",
           "great, how do I {v} the {o} then?", "bye for now, but who owns {s}?",
           "how do I {v} my {o}?", "why?", "which port?", "ok so what's the fix?",
           "thanks for the tip, what about {s}?", "hey, can you check {s}?"]
REAL_ZH = ["谢谢你的建议，但是怎么回滚？", "你好，{s}的日志在哪？", "好的，那{s}用哪个端口？",
           "谢谢，{o}怎么{v}？", "嗨，{s}挂了吗？", "收到，{s}昨晚为什么失败？",
           "好的，那怎么{v}{o}？", "再见之前问一下，{s}归谁负责？", "怎么{v}{o}？", "为什么？",
           "哪个端口？", "那怎么修？", "谢谢，那{s}呢？", "你好，帮我看下{s}"]


def gen_chit_chat(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        z = lang == "zh"
        if i % 3 == 2:
            tpl = rng.choice(REAL_ZH if z else REAL_EN)
            text = tpl.format(s=_svc(rng, lang), v=rng.choice(FAQ_VERBS)[z],
                              o=rng.choice(FAQ_OBJECTS)[z])
            chat = False
        else:
            text = rng.choice(CHAT_ZH if z else CHAT_EN) + rng.choice(DECOR_ZH if z else DECOR_EN)
            if not z:
                text = rng.choice([text, text.capitalize(), text.upper() if len(text) < 8 else text])
            chat = True
        out.append({"family": "chit_chat", "lang": lang, "id": f"chit_chat-{i}",
                    "data": {"text": text, "chit_chat": chat}})
    return out


# --- unrelated -----------------------------------------------------------------------------------

OFFTOPIC_EN = ["What's a good recipe for banana bread?", "Who won the football world cup in 2010?",
               "how tall is Mount Everest", "What is the capital of Peru?",
               "Recommend a novel for the weekend", "how do I get red wine out of a carpet?",
               "What time does the bakery on my street close?", "Is it going to rain in Oslo tomorrow?",
               "how many legs does a spider have", "What should I name my cat?",
               "best way to learn the violin as an adult", "What's the plot of Hamlet?"]
OFFTOPIC_ZH = ["红烧肉怎么做？", "2010年世界杯冠军是谁？", "珠穆朗玛峰有多高", "秘鲁的首都是哪里？",
               "周末推荐一本小说", "地毯上的红酒渍怎么洗掉？", "楼下面包店几点关门？",
               "明天杭州会下雨吗？", "蜘蛛有几条腿", "我的猫叫什么名字好？", "成年人怎么学小提琴",
               "《红楼梦》讲了什么？"]
ABSENT_EN = ["Which database does the {x} run on?", "Who owns the {x}?", "What port does the {x} use?"]
ABSENT_ZH = ["{x}跑在哪个数据库上？", "{x}归谁负责？", "{x}用哪个端口？"]
ABSENT_SUBJECTS: list[tuple[str, str]] = [
    ("fax gateway", "传真网关"), ("loyalty points engine", "积分引擎"),
    ("weather widget", "天气小组件"), ("parking reservation app", "停车预约应用"),
    ("canteen menu bot", "食堂菜单机器人"), ("badge printer service", "工牌打印服务"),
]


def _store(rng: random.Random, lang: str, k: int) -> list[str]:
    facts = []
    for _ in range(k):
        attr = rng.choice(ATTRS)
        lg = lang if rng.random() < 0.7 else ("zh" if lang == "en" else "en")
        facts.append(_fill(rng.choice(attr[lg]), _svc(rng, lg), _values(attr, rng, lg)[0]))
    return facts


def gen_unrelated(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        z = lang == "zh"
        if i % 4 == 3:
            x = rng.choice(ABSENT_SUBJECTS)[z]
            query, kind = rng.choice(ABSENT_ZH if z else ABSENT_EN).format(x=x), "absent_subject"
        else:
            query, kind = rng.choice(OFFTOPIC_ZH if z else OFFTOPIC_EN), "off_topic"
        out.append({"family": "unrelated", "lang": lang, "id": f"unrelated-{i}",
                    "data": {"kind": kind, "store": _store(rng, lang, 8), "query": query}})
    return out


# --- time_words ----------------------------------------------------------------------------------

# The benchmark's "now" is Wednesday 2026-03-11, 10:00 UTC. Each time word names the days it
# covers (offsets before now, 0 = today) and the day its memory is written on.
TIME_WORDS_EN: list[tuple[str, int, set[int]]] = [
    ("yesterday", 1, {1}), ("two days ago", 2, {2}), ("the day before yesterday", 2, {2}),
    ("three days ago", 3, {3}), ("last week", 6, set(range(3, 10))),
    ("on 3 March", 8, {8}), ("on March 5", 6, {6}), ("last Monday", 9, {9}),
    ("four days ago", 4, {4}), ("on 27 February", 12, {12}),
]
TIME_WORDS_ZH: list[tuple[str, int, set[int]]] = [
    ("昨天", 1, {1}), ("前天", 2, {2}), ("三天前", 3, {3}), ("上周", 6, set(range(3, 10))),
    ("3月3日", 8, {8}), ("3月5号", 6, {6}), ("上周一", 9, {9}), ("四天前", 4, {4}),
    ("2月27日", 12, {12}), ("两天前", 2, {2}),
]
DONE_EN = [("fix", "fixed", "Spent the afternoon fixing the {t}."),
           ("review", "reviewed", "Reviewed the pull request for the {t} today."),
           ("deploy", "deployed", "Deployed the {t} to production."),
           ("debug", "debugged", "Debugged the {t} with the on-call team."),
           ("document", "documented", "Wrote the docs for the {t}.")]
DONE_ZH = [("修", "修了", "下午一直在修{t}。"), ("评审", "评审了", "今天评审了{t}的合并请求。"),
           ("上线", "上线了", "把{t}上线到生产了。"), ("排查", "排查了", "和值班同学一起排查了{t}。"),
           ("写文档", "写了文档", "给{t}写了文档。")]
THINGS_EN = ["login page", "billing export", "cache warm-up job", "search ranking", "CSV importer",
             "retry logic", "rate limiter", "PDF renderer", "signup form", "audit log",
             "payment webhook", "nightly backup"]
THINGS_ZH = ["登录页", "账单导出", "缓存预热任务", "搜索排序", "CSV 导入", "重试逻辑", "限流器",
             "PDF 渲染", "注册表单", "审计日志", "支付回调", "夜间备份"]
Q_TIME_EN = ["What did I {verb} {tw}?", "What did I work on {tw}?", "{TW}, what did I {verb}?"]
Q_TIME_ZH = ["{tw}我{verb}了什么？", "{tw}我做了什么？", "我{tw}{verb}了啥"]
DISTRACT_EN = ["Someone asked what happened {tw}; nobody remembered.",
               "Let's not repeat what went wrong {tw}, said the manager at the retro.",
               "Note to self: the coffee machine broke {tw} too."]
DISTRACT_ZH = ["有人问{tw}发生了什么，没人记得。", "经理在复盘会上说别再重复{tw}的错误。",
               "备忘：咖啡机{tw}也坏了。"]


def gen_time_words(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        z = lang == "zh"
        words = TIME_WORDS_ZH if z else TIME_WORDS_EN
        tw, day, window = words[i // 2 % len(words)]
        verb, _past, tpl = rng.choice(DONE_ZH if z else DONE_EN)
        things = rng.sample(THINGS_ZH if z else THINGS_EN, 5)
        others = [d for d in range(0, 16) if d not in window]
        days = [day, *rng.sample(others, 3)]
        memories = [{"content": tpl.format(t=t), "days_ago": d} for t, d in zip(things, days)]
        distract_day = rng.choice([d for d in others if d not in days])
        distractor = rng.choice(DISTRACT_ZH if z else DISTRACT_EN).format(tw=tw)
        memories.append({"content": distractor, "days_ago": distract_day, "distractor": True})
        qt = rng.choice(Q_TIME_ZH if z else Q_TIME_EN)
        query = qt.format(verb=verb, tw=tw, TW=tw[:1].upper() + tw[1:])
        out.append({"family": "time_words", "lang": lang, "id": f"time_words-{i}",
                    "data": {"time_word": tw, "memories": memories, "target": 0,
                             "query": query}})
    return out


# --- cross_language ------------------------------------------------------------------------------

CROSS_STORE = 24  # memories per case: the top 5 is a fifth of the store


def cross_bank(rng: random.Random, k: int) -> list[str]:
    """``k`` service facts in both languages, one per (service, attribute): the store around
    a hand-written cross-language case (whose memory is about something else)."""
    combos = [(sv, a) for sv in SERVICES for a in ATTRS]
    out = []
    for (en, zh), attr in rng.sample(combos, k):
        lg = rng.choice(LANG_PAIR)
        out.append(_fill(rng.choice(attr[lg]), en if lg == "en" else zh,
                         _values(attr, rng, lg)[0]))
    return out


LANG_PAIR = ("en", "zh")


def gen_cross_language(rng: random.Random, n: int) -> list[Case]:
    """The question's language is the case's; the memory is in the other one, among
    ``CROSS_STORE - 1`` facts about other services and attributes in both languages (some
    about the same service)."""
    out = []
    for i, lang in enumerate(_langs(n)):
        stored = "zh" if lang == "en" else "en"
        (en, zh), attr = rng.choice(SERVICES), rng.choice(ATTRS)
        combos = [(sv, a) for sv in SERVICES for a in ATTRS
                  if not (sv[0] == en and a["key"] == attr["key"])]
        memories = [_fill(rng.choice(attr[stored]), en if stored == "en" else zh,
                          _values(attr, rng, stored)[0])]
        for (oen, ozh), oattr in rng.sample(combos, CROSS_STORE - 1):
            lg = rng.choice(LANG_PAIR)
            memories.append(_fill(rng.choice(oattr[lg]), oen if lg == "en" else ozh,
                                  _values(oattr, rng, lg)[0]))
        q = _fill(rng.choice(attr["q_" + lang]), en if lang == "en" else zh)
        out.append({"family": "cross_language", "lang": lang, "id": f"cross_language-{i}",
                    "data": {"memories": memories, "target": 0, "query": q}})
    return out


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


GENERATORS: dict[str, tuple[Callable[[random.Random, int], list[Case]], int]] = {
    "update": (gen_update, 120),
    "transition": (gen_transition, 96),
    "after_change": (gen_after_change, 64),
    "negation": (gen_negation, 48),
    "distinct": (gen_distinct, 84),
    "near_duplicate": (gen_near_duplicate, 80),
    "faq_reuse": (gen_faq_reuse, 120),
    "chit_chat": (gen_chit_chat, 150),
    "unrelated": (gen_unrelated, 60),
    "time_words": (gen_time_words, 60),
    "cross_language": (gen_cross_language, 80),
    "learned": (gen_learned, 40),
}


def generate(seed: int = 0) -> list[Case]:
    """Every family's template cases, deterministic for ``seed`` (each family draws from its
    own generator seeded by ``seed`` and the family name, so families do not shift each
    other)."""
    out: list[Case] = []
    for family, (gen, n) in GENERATORS.items():
        rng = random.Random(f"{seed}:{family}")
        for case in gen(rng, n):
            case["origin"] = "template"
            out.append(case)
    return out
