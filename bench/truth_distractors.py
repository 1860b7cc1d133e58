"""Distractor statements for bench/bench_truth_candidates.py: realistic statements of fact in
English and Chinese, deterministic, from four sources (:func:`pool`):

- ``facts``: :class:`FactGenerator`, templates of the kinds of facts people tell an assistant
  (workplace, personal life, devops, customer support), half English and half Chinese, with
  their slots filled from lists of names, places, times, amounts and tools;
- ``synthetic``: bench_scale's generator (DevOps notes, about a fifth Chinese);
- ``conversation``: LoCoMo and LongMemEval turns of conversation, read at run time from
  ``--bench-data`` when it is there (never copied into the repository); skipped otherwise;
- ``writers``: the old and new statements of the ``train`` writers of ``training/truth`` (other
  writers than the cases measured, on the same kinds of facts: the hardest look-alikes).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_scale import make_texts as scale_texts  # noqa: E402

T = TypeVar("T")
POOL_SEED = 39
# Shares of the pool, the finite sources first: every writer statement, conversation turns up
# to this share; the rest split between the fact templates and bench_scale's generator.
CONVERSATION_SHARE = 0.12
FACT_SHARE = 0.6  # of what the finite sources leave

EN_PEOPLE = (
    "Alice", "Ben", "Carla", "Dev", "Erin", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kate",
    "Liam", "Maya", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Sam", "Tara", "Umar", "Vera",
    "Will", "Xin", "Yara", "Zoe", "Priya", "Marco", "Hannah", "Tom", "Lena", "Oscar", "Ruth",
    "Diego", "Mei", "Jonas", "Aisha", "Felix", "Nora", "Pavel",
)
EN_SURNAMES = ("Smith", "Chen", "Patel", "Garcia", "Müller", "Kim", "Nguyen", "Okafor", "Rossi",
               "Larsen", "Silva", "Cohen", "Tanaka", "Novak", "Brown", "Haddad")
ZH_PEOPLE = (
    "张伟", "李娜", "王芳", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周杰", "吴婷", "徐明", "孙悦",
    "马超", "朱琳", "胡斌", "郭佳", "何欢", "高远", "林峰", "罗丹", "梁晨", "宋雨", "郑凯", "谢婉",
    "韩冰", "唐宁", "冯涛", "董洁", "程浩", "曹颖", "袁野", "邓超", "许晴", "傅强", "沈丽", "彭博",
)
EN_RELATIONS = ("my sister", "my brother", "my mom", "my dad", "my wife", "my husband",
                "my son", "my daughter", "my manager", "my landlord", "my best friend",
                "my grandma", "my roommate", "my partner", "my cousin", "my neighbour")
ZH_RELATIONS = ("我姐", "我哥", "我妈", "我爸", "我老婆", "我老公", "我儿子", "我女儿", "我领导",
                "房东", "我闺蜜", "我奶奶", "我室友", "我表弟", "隔壁邻居", "我对象")
EN_CITIES = ("Berlin", "Lisbon", "Austin", "Toronto", "Osaka", "Seoul", "Dublin", "Denver",
             "Madrid", "Prague", "Singapore", "Melbourne", "Boston", "Nairobi", "Oslo", "Chicago")
ZH_CITIES = ("北京", "上海", "深圳", "杭州", "广州", "成都", "武汉", "南京", "西安", "苏州",
             "厦门", "青岛", "重庆", "长沙", "天津", "昆明")
EN_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ZH_DAYS = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")
EN_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December")
EN_TEAMS = ("platform", "payments", "growth", "data", "mobile", "security", "infra", "design",
            "finance", "legal", "sales ops", "customer success", "QA", "search", "billing")
ZH_TEAMS = ("平台组", "支付组", "增长组", "数据组", "移动端", "安全组", "基础架构", "设计部",
            "财务部", "法务部", "销售运营", "客户成功", "测试组", "搜索组", "市场部", "人事部")
EN_MEETINGS = ("standup", "weekly sync", "sprint planning", "retro", "1:1 with my manager",
               "all-hands", "design review", "ops review", "book club", "team lunch")
ZH_MEETINGS = ("站会", "周会", "迭代评审", "复盘会", "一对一", "全员大会", "设计评审", "周报会",
               "读书会", "部门聚餐")
SERVICES = ("checkout-api", "auth-service", "billing-worker", "search-indexer", "notif-svc",
            "order-gateway", "user-profile", "report-cron", "media-proxy", "ledger-db",
            "etl-runner", "pricing-api", "chat-backend", "inventory-sync", "cdn-edge")
TOOLS = ("Jenkins", "GitHub Actions", "GitLab CI", "ArgoCD", "Terraform", "Grafana", "Datadog",
         "PagerDuty", "Sentry", "Vault", "Kafka", "RabbitMQ", "Redis", "Postgres", "MySQL",
         "Jira", "Confluence", "Notion", "Slack", "Feishu", "DingTalk", "Zoom", "1Password")
DBS = ("Postgres 14", "Postgres 16", "MySQL 8.0", "Redis 7", "MongoDB 6", "ClickHouse",
       "Elasticsearch 8", "TiDB", "Cassandra 4")
REGIONS = ("us-east-1", "eu-west-1", "ap-southeast-1", "cn-north-1", "eu-central-1", "us-west-2")
EN_FOODS = ("peanuts", "shellfish", "gluten", "lactose", "penicillin", "cats", "pollen", "soy")
ZH_FOODS = ("花生", "海鲜", "芒果", "牛奶", "青霉素", "猫毛", "花粉", "鸡蛋")
EN_HOBBIES = ("bouldering", "pottery", "running", "chess", "salsa", "swimming", "guitar",
              "photography", "cycling", "yoga", "baking", "go")
ZH_HOBBIES = ("攀岩", "陶艺", "跑步", "下棋", "游泳", "吉他", "摄影", "骑行", "瑜伽", "烘焙",
              "羽毛球", "书法")
PLANS = ("Basic", "Pro", "Team", "Business", "Enterprise", "Starter", "Premium")
EN_PETS = ("dog", "cat", "rabbit", "parrot", "hamster", "turtle")
ZH_PETS = ("狗", "猫", "兔子", "鹦鹉", "仓鼠", "乌龟")
PET_NAMES = ("Biscuit", "Mochi", "Luna", "Pepper", "Tofu", "Max", "Coco", "Nala", "Bao", "Olive")
EN_CHANNELS = ("Slack", "WhatsApp", "WeChat", "SMS", "a phone call", "Teams", "Signal")
ZH_CHANNELS = ("微信", "钉钉", "飞书", "短信", "电话", "企业微信", "邮件")
EN_PLACES = ("the gym on 5th", "the co-working space", "the downtown office", "the warehouse",
             "the Airbnb", "my parents' place", "the lab", "the client site")
ZH_PLACES = ("公司楼下的健身房", "共享办公室", "园区办公室", "仓库", "民宿", "老家", "实验室", "客户现场")


class FactGenerator:
    """Statements of fact as people type them to an assistant, English or Chinese."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self._en = [getattr(self, n) for n in sorted(dir(self)) if n.startswith("_en_")]
        self._zh = [getattr(self, n) for n in sorted(dir(self)) if n.startswith("_zh_")]

    def c(self, options: Sequence[T]) -> T:
        return self.r.choice(options)

    def n(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)

    def en_person(self) -> str:
        p = self.c(EN_PEOPLE)
        return f"{p} {self.c(EN_SURNAMES)}" if self.r.random() < 0.3 else p

    def time12(self) -> str:
        h, m = self.n(7, 18), self.c(("00", "15", "30", "45"))
        return f"{(h - 1) % 12 + 1}:{m} {'am' if h < 12 else 'pm'}"

    def time24(self) -> str:
        return f"{self.n(7, 21)}:{self.c(('00', '15', '30', '45'))}"

    def date_en(self) -> str:
        return f"{self.c(EN_MONTHS)} {self.n(1, 28)}"

    def date_zh(self) -> str:
        return f"{self.n(1, 12)}月{self.n(1, 28)}号"

    def money(self) -> str:
        return self.c(("$", "€", "£")) + str(self.c((15, 20, 25, 30, 40, 45, 50, 60, 80, 120, 150,
                                                     200, 250, 500, 1200, 1500, 2000)))

    def yuan(self) -> str:
        return f"{self.c((20, 30, 35, 50, 80, 100, 150, 200, 300, 500, 800, 1200, 3000, 5000))}元"

    def version(self) -> str:
        return f"{self.n(1, 9)}.{self.n(0, 24)}.{self.n(0, 12)}"

    def ticket(self) -> str:
        return f"{self.c(('CS', 'SUP', 'OPS', 'INC', 'HR'))}-{self.n(1000, 99999)}"

    def customer(self) -> str:
        return self.c(("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne",
                       "Soylent", "Vandelay", "Pied Piper", "Northwind", "Contoso")) + \
            self.c((" Corp", " Ltd", "", " GmbH", " Inc"))

    def zh_customer(self) -> str:
        return self.c(("华联", "鼎盛", "恒通", "新元", "启航", "蓝海", "明德", "正泰", "远景", "天成")) + \
            self.c(("科技", "贸易", "物流", "餐饮", "教育", "医疗")) + self.c(("有限公司", "", "集团"))

    # -- English ------------------------------------------------------------------------------
    def _en_birthday(self) -> str:
        return f"{self.c(EN_RELATIONS).capitalize()}'s birthday is {self.date_en()}."

    def _en_meeting(self) -> str:
        return self.c((f"The {self.c(EN_MEETINGS)} is every {self.c(EN_DAYS)} at {self.time12()}.",
                       f"{self.c(EN_MEETINGS).capitalize()} is {self.c(EN_DAYS)}s {self.time12()}, "
                       f"room {self.n(100, 699)}."))

    def _en_contact(self) -> str:
        return f"{self.en_person()} on the {self.c(EN_TEAMS)} team is the contact for " \
               f"{self.c(SERVICES)} questions."

    def _en_allergy(self) -> str:
        return self.c((f"I'm allergic to {self.c(EN_FOODS)}.",
                       f"{self.c(EN_RELATIONS).capitalize()} can't have {self.c(EN_FOODS)}."))

    def _en_hobby(self) -> str:
        return f"I do {self.c(EN_HOBBIES)} on {self.c(EN_DAYS)} evenings, usually at " \
               f"{self.c(EN_PLACES)}."

    def _en_rent(self) -> str:
        return f"Rent is {self.money()}, due on the {self.n(1, 28)}th, paid to the " \
               f"{self.c(('landlord', 'agency', 'building office'))} by bank transfer."

    def _en_db(self) -> str:
        return f"{self.c(SERVICES)} runs on {self.c(DBS)} in {self.c(REGIONS)}."

    def _en_timeout(self) -> str:
        return f"Default timeout for {self.c(SERVICES)} is {self.n(2, 120)}s, retries {self.n(0, 5)}."

    def _en_oncall(self) -> str:
        return f"{self.en_person()} is on call for {self.c(SERVICES)} this week, " \
               f"page via {self.c(('PagerDuty', 'Opsgenie', 'phone'))}."

    def _en_plan(self) -> str:
        return f"{self.customer()} is on the {self.c(PLANS)} plan, renews {self.date_en()}."

    def _en_ticket(self) -> str:
        return f"Ticket {self.ticket()}: {self.customer()} can't log in since the " \
               f"{self.version()} update."

    def _en_tool(self) -> str:
        what = self.c(("deploys", "alerts", "secrets", "docs", "tickets", "chat", "dashboards"))
        return f"We use {self.c(TOOLS)} for {what} on the {self.c(EN_TEAMS)} team."

    def _en_leave(self) -> str:
        return f"{self.en_person()} is on leave until {self.date_en()}; {self.en_person()} covers."

    def _en_commute(self) -> str:
        return f"I take the {self.c(('7', '12', '42', 'N', 'red line', 'blue line', 'express'))} " \
               f"to work, usually the {self.time12()} one."

    def _en_pet(self) -> str:
        return f"Our {self.c(EN_PETS)} {self.c(PET_NAMES)} gets fed at {self.time12()} " \
               f"and {self.time12()}."

    def _en_pref(self) -> str:
        return f"{self.en_person()} prefers {self.c(EN_CHANNELS)} over email for anything urgent."

    def _en_flight(self) -> str:
        return f"Flight to {self.c(EN_CITIES)} leaves {self.date_en()} at {self.time12()}, " \
               f"seat {self.n(3, 40)}{self.c('ABCDEF')}."

    def _en_budget(self) -> str:
        what = self.c(("offsite", "training", "lunch", "travel", "hardware"))
        return f"The {self.c(EN_TEAMS)} team's {what} budget is {self.money()} per person."

    def _en_address(self) -> str:
        return f"{self.customer()} ships to their {self.c(EN_CITIES)} warehouse, dock " \
               f"{self.n(1, 12)}."

    def _en_school(self) -> str:
        return f"{self.c(('My son', 'My daughter', 'The kids'))} get picked up at {self.time12()} " \
               f"on {self.c(EN_DAYS)}s."

    def _en_doctor(self) -> str:
        return f"My {self.c(('dentist', 'GP', 'physio', 'therapist', 'eye doctor'))} is Dr. " \
               f"{self.c(EN_SURNAMES)} in {self.c(EN_CITIES)}."

    def _en_wifi(self) -> str:
        return f"Guest wifi at {self.c(EN_PLACES)} is {self.c(PET_NAMES)}-{self.n(10, 99)}."

    def _en_release(self) -> str:
        return f"{self.c(SERVICES)} {self.version()} goes out on {self.c(EN_DAYS)}, " \
               f"{self.en_person()} signs off."

    def _en_quota(self) -> str:
        return f"{self.c(SERVICES)} gets {self.n(1, 64)} GB memory and {self.n(1, 16)} vCPU in " \
               f"{self.c(('prod', 'staging', 'dev'))}."

    def _en_parking(self) -> str:
        return f"Parking spot {self.c('ABCD')}{self.n(1, 80)} belongs to {self.en_person()}."

    def _en_gym(self) -> str:
        return f"Gym membership is {self.money()} a month, cancel by the {self.n(1, 28)}th."

    def _en_approve(self) -> str:
        return f"Expenses over {self.money()} need {self.en_person()}'s approval."

    # -- Chinese ------------------------------------------------------------------------------
    def _zh_birthday(self) -> str:
        return f"{self.c(ZH_RELATIONS)}生日是{self.date_zh()}。"

    def _zh_meeting(self) -> str:
        return self.c((
            f"{self.c(ZH_MEETINGS)}每{self.c(ZH_DAYS)}{self.time24()}开，在{self.n(2, 30)}楼。",
            f"{self.c(ZH_TEAMS)}的{self.c(ZH_MEETINGS)}定在{self.c(ZH_DAYS)}上午{self.n(9, 11)}点。"))

    def _zh_contact(self) -> str:
        return f"{self.c(SERVICES)}有问题找{self.c(ZH_TEAMS)}的{self.c(ZH_PEOPLE)}。"

    def _zh_allergy(self) -> str:
        return self.c((f"我对{self.c(ZH_FOODS)}过敏。", f"{self.c(ZH_RELATIONS)}不能吃{self.c(ZH_FOODS)}。"))

    def _zh_hobby(self) -> str:
        return f"我每{self.c(ZH_DAYS)}晚上去{self.c(ZH_PLACES)}{self.c(('练', '玩', '上'))}" \
               f"{self.c(ZH_HOBBIES)}。"

    def _zh_rent(self) -> str:
        return f"房租每月{self.yuan()}，{self.n(1, 28)}号前转给房东。"

    def _zh_db(self) -> str:
        return f"{self.c(SERVICES)}用的是{self.c(DBS)}，部署在{self.c(REGIONS)}。"

    def _zh_timeout(self) -> str:
        return f"{self.c(SERVICES)}默认超时{self.n(2, 120)}秒，重试{self.n(0, 5)}次。"

    def _zh_oncall(self) -> str:
        return f"这周{self.c(SERVICES)}值班是{self.c(ZH_PEOPLE)}，有事{self.c(ZH_CHANNELS)}找他。"

    def _zh_plan(self) -> str:
        return f"{self.zh_customer()}买的是{self.c(PLANS)}版，{self.date_zh()}续费。"

    def _zh_ticket(self) -> str:
        return f"工单{self.ticket()}：{self.zh_customer()}升级到{self.version()}以后登录不了。"

    def _zh_tool(self) -> str:
        what = self.c(("做发布", "管告警", "管密钥", "写文档", "跑流水线", "沟通", "看监控"))
        return f"{self.c(ZH_TEAMS)}现在用{self.c(TOOLS)}{what}。"

    def _zh_leave(self) -> str:
        return f"{self.c(ZH_PEOPLE)}休假到{self.date_zh()}，期间{self.c(ZH_PEOPLE)}代班。"

    def _zh_commute(self) -> str:
        return f"我每天坐地铁{self.n(1, 16)}号线上班，一般{self.time24()}出门。"

    def _zh_pet(self) -> str:
        return f"家里的{self.c(ZH_PETS)}叫{self.c(PET_NAMES)}，一天喂{self.n(2, 3)}次。"

    def _zh_pref(self) -> str:
        return f"{self.c(ZH_PEOPLE)}说急事直接{self.c(ZH_CHANNELS)}联系，别发邮件。"

    def _zh_flight(self) -> str:
        return f"{self.date_zh()}飞{self.c(ZH_CITIES)}，航班{self.time24()}起飞，" \
               f"{self.c(('MU', 'CA', 'CZ', 'HU', 'ZH'))}{self.n(1000, 9999)}。"

    def _zh_budget(self) -> str:
        return f"{self.c(ZH_TEAMS)}{self.c(('团建', '培训', '差旅', '聚餐', '设备'))}预算每人{self.yuan()}。"

    def _zh_address(self) -> str:
        return f"{self.zh_customer()}的货发到{self.c(ZH_CITIES)}仓，收货人{self.c(ZH_PEOPLE)}。"

    def _zh_school(self) -> str:
        return f"{self.c(('儿子', '女儿', '孩子'))}{self.c(ZH_DAYS)}下午{self.n(3, 5)}点半放学，要去接。"

    def _zh_doctor(self) -> str:
        return f"我的{self.c(('牙医', '家庭医生', '康复师', '心理咨询师', '眼科医生'))}是" \
               f"{self.c(ZH_CITIES)}的{self.c(ZH_PEOPLE)[0]}医生。"

    def _zh_wifi(self) -> str:
        return f"{self.c(ZH_PLACES)}的wifi密码是{self.c(PET_NAMES).lower()}{self.n(1000, 9999)}。"

    def _zh_release(self) -> str:
        return f"{self.c(SERVICES)} {self.version()}定在{self.c(ZH_DAYS)}发布，{self.c(ZH_PEOPLE)}审批。"

    def _zh_quota(self) -> str:
        return f"{self.c(SERVICES)}在{self.c(('生产', '预发', '测试'))}环境配{self.n(1, 64)}G内存、" \
               f"{self.n(1, 16)}核。"

    def _zh_parking(self) -> str:
        return f"地下{self.n(1, 3)}层{self.n(1, 200)}号车位是{self.c(ZH_PEOPLE)}的。"

    def _zh_gym(self) -> str:
        return f"健身卡一个月{self.yuan()}，每月{self.n(1, 28)}号自动扣费。"

    def _zh_approve(self) -> str:
        return f"超过{self.yuan()}的报销要{self.c(ZH_PEOPLE)}签字。"

    def sentence(self) -> str:
        return str(self.r.choice(self._zh if self.r.random() < 0.5 else self._en)())


def conversation_turns(data: Path | None) -> list[str]:
    """LoCoMo's turns and LongMemEval's user turns (at most 400 characters), when the files
    are under ``data``; none otherwise."""
    out: list[str] = []
    if data is None:
        return out
    locomo = data / "locomo" / "locomo10.json"
    if locomo.is_file():
        for sample in json.loads(locomo.read_text("utf-8")):
            for key, session in sample["conversation"].items():
                if key.startswith("session_") and isinstance(session, list):
                    out += [t["text"] for t in session if isinstance(t.get("text"), str)]
    lme = data / "longmemeval" / "longmemeval_s_3haystacks_derived.json"
    if lme.is_file():
        for hay in json.loads(lme.read_text("utf-8")):
            for session in hay.get("haystack_sessions", []):
                out += [t["content"] for t in session if t.get("role") == "user"
                        and isinstance(t.get("content"), str) and len(t["content"]) <= 400]
    return [t.strip() for t in out if len(t.strip()) >= 12]


def writer_statements(truth: Path, writers: list[str]) -> list[str]:
    """The old and new statements of ``writers``' cases."""
    out: list[str] = []
    for w in writers:
        for line in (truth / f"{w}.jsonl").read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out += [row["old"], row["new"]]
    return out


def pool(n: int, truth: Path, train: list[str], data: Path | None
         ) -> tuple[list[str], list[str], dict[str, int]]:
    """``n`` distinct distractor statements, shuffled (every prefix has about the same mix),
    each with its source, and the count by source."""
    writers = writer_statements(truth, train)
    turns = conversation_turns(data)
    rng = random.Random(POOL_SEED)
    rng.shuffle(turns)
    turns = turns[: int(n * CONVERSATION_SHARE)]
    rest = max(0, n - len(writers) - len(turns))
    gen = FactGenerator(POOL_SEED)
    facts: dict[str, None] = {}
    while len(facts) < int(rest * FACT_SHARE):
        facts[gen.sentence()] = None
    # Twice what is wanted: duplicates across sources are dropped below.
    synthetic = scale_texts(2 * (rest - len(facts)) + 100)
    seen: set[str] = set()
    texts: list[str] = []
    sources: list[str] = []
    for name, items in (("writers", writers), ("conversation", turns), ("facts", list(facts)),
                        ("synthetic", synthetic)):
        for t in items:
            if t not in seen and len(texts) < n:
                seen.add(t)
                texts.append(t)
                sources.append(name)
    order = list(range(len(texts)))
    rng.shuffle(order)
    texts = [texts[i] for i in order]
    sources = [sources[i] for i in order]
    counts = {s: sources.count(s) for s in dict.fromkeys(sources)}
    return texts, sources, counts
