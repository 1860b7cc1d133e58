"""Words that name an attribute of a thing (its port, region, owner...), in English and Chinese.

Plain data, read by the offline supersession rules (:mod:`varvemem.engines.claims`) to tell
*what is said* of a subject from *the subject itself*: "API gateway ships from stable-11" and
"API gateway releases are cut from stable-6" state the same attribute (branch) of the same
subject, while "the port of chat service is 8081" and "the port of email sender is 3000"
state one attribute of two subjects. A deployment extends or replaces the table with the
``update.attribute_words`` setting.

Each attribute has *strong* words (nouns that name it: "port", "端口") and *weak* ones (verbs
and phrasings that suggest it: "listens", "监听"). A statement's attributes are its strong
words' when it has any, else its weak words': "部署在 k8s-4 集群" is about a cluster and
"部署在 cn-hangzhou 区域" about a region, though both say "部署" (deployed).

``LIGHT`` words carry no meaning of their own in such statements ("runs on", "uses", "per
pod", "跑在", "用的是"): they are neither subject nor attribute.
"""

from __future__ import annotations

# attribute -> (strong words, weak words). English words are matched by their stem, so one
# form of a word is enough; English phrases ("on call") as words, spaces or hyphens between;
# Chinese words as substrings, longest first.
ATTRIBUTE_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "port": (("port", "端口"), ("listen", "bind", "serve", "answer", "expose", "监听", "暴露", "开在")),
    "region": (("region", "zone", "datacenter", "data center", "区域", "地域", "可用区", "机房"),
               ("托管",)),
    "cluster": (("cluster", "集群"), ("deploy", "deployed", "部署")),
    "host": (("host", "server", "machine", "node", "vm", "主机", "服务器", "机器", "节点"), ()),
    "database": (("database", "db", "datastore", "storage", "数据库", "的库", "库在", "存储"),
                 ("store", "stores", "talks", "connect", "连的是", "数据存在", "连的")),
    "owner": (("owner", "maintainer", "lead", "contact", "负责人", "维护人", "联系人", "主管"),
              ("own", "owned", "owns", "responsible", "ask", "maintain", "manage", "负责",
               "有问题找", "归 管")),  # "归张伟管": the name, a value, is masked by a space
    "branch": (("branch", "release branch", "分支"),
               ("ship", "ships", "release", "releases", "cut", "发版", "发布")),
    "memory": (("memory", "ram", "heap", "内存"), ()),
    "cpu": (("cpu", "vcpu", "cores", "core", "核数"), ()),
    "disk": (("disk", "volume", "磁盘", "硬盘", "存储卷"), ()),
    "alerts": (("alert", "alerts", "alerting", "channel", "pager", "告警", "报警", "频道"),
               ("page", "pages", "notify", "通知", "群")),
    "version": (("version", "版本"), ("upgraded", "升级")),
    "timeout": (("timeout", "deadline", "超时"), ()),
    "oncall": (("on call", "oncall", "on-call engineer", "pager duty", "值班", "值班人", "轮值"),
               ()),
    "replicas": (("replicas", "replica", "instances", "副本", "副本数", "实例数"), ()),
    "address": (("url", "endpoint", "address", "domain", "hostname", "地址", "域名", "接口"), ()),
    "phone": (("phone", "mobile", "telephone", "电话", "手机", "手机号"), ()),
    "email": (("mailbox", "邮箱", "邮件地址"), ()),
    "plan": (("plan", "subscription", "tier", "套餐", "方案"), ()),
    "vendor": (("provider", "vendor", "carrier", "isp", "供应商", "运营商", "服务商"), ()),
    "bucket": (("bucket", "存储桶", "桶"), ()),
    "cache": (("cache", "caching", "缓存"), ()),
    "queue": (("queue", "messaging", "broker", "message queue", "消息队列", "队列"), ()),
    "schedule": (("schedule", "时间", "几点"), ("every", "每周", "每天")),
    "location": (("city", "home", "hometown", "desk", "seat", "office", "floor", "住址", "城市",
                  "工位", "座位", "办公室", "楼层"),
                 ("live", "lives", "based", "住在", "坐在")),
    "tool": (("editor", "ide", "browser", "shell", "terminal", "os", "laptop", "编辑器",
              "浏览器", "终端", "电脑"), ("coding", "写代码")),
    "language": (("language", "语言"), ()),
    "manager": (("manager", "boss", "supervisor", "经理", "领导", "上级"), ("汇报",)),
    "team": (("team", "squad", "department", "团队", "小组", "部门"), ("join", "joined")),
    "price": (("price", "cost", "fee", "budget", "价格", "费用", "预算", "月费"),
              ("pay", "paying", "costs")),
    "limit": (("limit", "quota", "cap", "上限", "配额", "限额", "限流"), ()),
}

# Neither subject nor attribute: the verbs and fillers of short statements of fact.
LIGHT: tuple[str, ...] = (
    "use", "uses", "using", "used", "run", "runs", "running", "get", "gets", "give", "gives",
    "have", "has", "go", "goes", "land", "lands", "point", "points", "put", "keep", "stay",
    "rely", "relies", "depend", "depends", "set", "sit", "sits", "now", "new", "per", "pod",
    "pods", "fyi", "btw", "current", "currently", "located", "via", "configured", "person",
    "data",
    "跑在", "跑", "用的是", "用的", "用", "所在的", "所在", "对外", "放在", "每个", "这台",
    "这个", "上", "里", "进", "发到", "出问题会", "有问题", "为", "给", "依赖", "做",
    "都", "也", "到", "现在", "目前", "已经", "配置", "设置", "限制", "一台", "一个",
)

# What a value's shape says of its attribute when no word names one ("runs on mysql-5",
# "sits on pg4-replica"): ids of well-known kinds of thing, and units. Regular expressions
# over the normalised (lower-case) value.
VALUE_SHAPES: dict[str, str] = {
    "database": r"^(?:pg|postgres|psql|mysql|mariadb|tidb|db|mongo|oracle|mssql|rds)[\w.-]*$",
    "cluster": r"^(?:k8s|eks|gke|aks|ack|tke|openshift|kube)[\w.-]*$",
    "region": r"^(?:us|eu|ap|cn|sa|ca|me|af)-[a-z]+(?:-\d+)?$",
    "branch": r"^(?:main|master|stable|release|rel|hotfix|develop|dev|feature)(?:[-/][\w./-]+)$",
    "memory": r"^\d+(?:\.\d+)?\s?(?:gi|mi|gib|mib|gb|mb)$",
    "alerts": r"^#[a-z][\w-]*$",
}

# Words that tell two subjects apart though everything else is alike: "Redis version on
# production" and "Redis version on dev" are two facts. English by stem; Chinese as
# substrings.
QUALIFIERS: tuple[str, ...] = (
    "production", "prod", "staging", "stage", "stg", "dev", "development", "test", "testing",
    "qa", "uat", "sandbox", "preprod", "canary", "local", "primary", "secondary", "replica",
    "backup", "internal", "external", "public", "private", "mobile", "desktop", "web",
    "生产", "线上", "预发", "测试", "开发", "沙箱", "灰度", "本地", "主库", "从库", "备份", "内网",
    "外网", "移动端", "桌面端",
)
