"""The families of the ask route: ``faq_reuse`` (a stored question asked again in other
words, or a different question on the same topic), ``chit_chat`` (small talk, and real
questions dressed as it) and ``unrelated`` (questions nothing stored answers); with the
FAQ vocabulary the near duplicates use too.
"""

from __future__ import annotations

import random

from .vocabulary import (
    ATTRS,
    Case,
)
from .vocabulary import fill as _fill
from .vocabulary import langs as _langs
from .vocabulary import svc as _svc
from .vocabulary import values as _values

# --- FAQ vocabulary (also the near duplicates' and the chit-chat's questions) --------------------

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
