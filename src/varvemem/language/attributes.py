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
    # the words of talk, which open a turn but name nothing ("Yeah, they ...", "Thanks, ...")
    "yeah", "yes", "yep", "yup", "nope", "oh", "wow", "haha", "hey", "hi", "hello", "thanks",
    "thank", "sorry", "ok", "okay", "well", "sure", "great", "nice", "cool", "awesome", "hmm",
    "ah", "aw", "ugh", "oops", "lol", "omg", "congrats", "cheers", "alright", "definitely",
    "absolutely", "totally", "indeed", "anyway", "honestly",
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

# When, how often and how much: what a habit or a schedule says beside what is done ("I go
# swimming every Tuesday morning", "我每天喝两杯咖啡"). A negation that names no value ("I no
# longer go swimming", "我已经不喝咖啡了") retires the statement it covers when the rest of
# that statement is only such words. English by stem; Chinese as substrings, longest first.
MODIFIERS: tuple[str, ...] = (
    "every", "each", "other", "daily", "weekly", "monthly", "yearly", "nightly", "day", "days",
    "week", "weeks", "month", "weekend", "weekends", "weekday", "weekdays", "morning",
    "mornings", "afternoon", "afternoons", "evening", "evenings", "night", "nights", "usually",
    "often", "always", "sometimes", "normally", "regularly", "most", "twice", "once", "times",
    "cup", "cups", "hour", "hours", "lunch", "monday", "mondays", "tuesday", "tuesdays",
    "wednesday", "wednesdays", "thursday", "thursdays", "friday", "fridays", "saturday",
    "saturdays", "sunday", "sundays",
    "每天", "每日", "每晚", "每周", "每月", "每年", "每个", "每", "天天", "周末", "工作日",
    "平时", "平常", "经常", "通常", "一般", "总是", "常常", "偶尔", "有时", "早上", "上午",
    "中午", "下午", "晚上", "凌晨", "夜里", "半夜", "早晚", "小时", "分钟", "然后", "都", "会",
    "去", "要", "也", "还", "再",
    "周一", "周二", "周三", "周四", "周五", "周六", "周日", "星期", "礼拜",
    # since when it stopped: "这学期不学钢琴了", "this year I no longer ..."
    "这学期", "本学期", "这周", "本周", "这个月", "本月", "今年", "这阵子", "这段时间", "以后",
    "从此", "semester", "term", "year", "season", "lately",
)

# Heads that name no subject of their own ("the badge *service*", "支付*服务*"), and the words
# of a question: a query's subject is its other words (the relevance floor's absent subject).
GENERIC_HEADS: tuple[str, ...] = (
    "service", "services", "system", "app", "application", "platform", "tool", "job",
    "server", "module", "component", "project", "team",
    "服务", "系统", "应用", "平台", "工具", "任务", "模块", "组件", "项目", "机器", "程序",
    "哪个", "哪些", "哪里", "哪儿", "什么", "多少", "怎么", "如何", "是否", "为什么",
)
