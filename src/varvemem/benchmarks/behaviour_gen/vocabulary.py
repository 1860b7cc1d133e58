"""What the behaviour generators share: the case type, the systems, components, people and
places they name (in English and Chinese), the attributes a subject has (how each is
stated, asked and valued) and the helpers that draw values and fill templates.
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


def pair(rng: random.Random, make: Callable[[random.Random], str]) -> tuple[str, str]:
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


def version(rng: random.Random) -> str:
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


def person(rng: random.Random, lang: str) -> str:
    return rng.choice(PEOPLE_EN if lang == "en" else PEOPLE_ZH)


def values(attr: dict[str, Any], rng: random.Random, lang: str) -> tuple[str, str]:
    if attr["values"] is None:
        return pair(rng, lambda r: person(r, lang))
    return pair(rng, attr["values"])


def fill(template: str, s: str, v: str = "") -> str:
    cap = s[:1].upper() + s[1:]
    return template.format(s=s, S=cap, v=v)


def svc(rng: random.Random, lang: str) -> str:
    en, zh = rng.choice(SERVICES)
    if lang == "en":
        return en if rng.random() < 0.7 else f"the {en}"
    return zh


def langs(n: int) -> list[str]:
    return ["en" if i % 2 == 0 else "zh" for i in range(n)]
