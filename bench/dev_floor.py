"""Dev cases for the read side: the relevance floor, the context budget and chit-chat.

Run: ``PYTHONPATH=src python bench/dev_floor.py [--dump]``. Prints, per part, the share of
cases handled right. ``--dump`` prints every query's best candidate evidence (cosine, keyword,
tag, matched query terms) to design the floor from.

The floor part stores a small mixed zh/en memory (agent facts, ops notes, preferences) and
asks related questions (paraphrases, keywords, another language) and unrelated ones (topics
the store does not hold, some sharing a common word with it).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from varvemem import Memory, Settings
from varvemem.engines.intent import chit_chat
from varvemem.text import index_terms

MEMORIES = [
    ("The staging cluster is eks-stg-2 in eu-west-1", ["infra", "staging"]),
    ("Production deploys go out on Tuesdays and Thursdays after 10am", ["deploy"]),
    ("Alice prefers dark mode and a 14pt monospace font in the editor", ["alice"]),
    ("The billing service talks to Stripe through the payments-gateway", ["billing"]),
    ("Our on-call rotation changes every Monday at 9am", ["oncall"]),
    ("Rollback a bad release with `kubectl rollout undo deployment/api`", ["deploy"]),
    ("Bob is allergic to peanuts; order the team lunch without them", ["bob"]),
    ("The VPN password is reset from the self-service portal", ["vpn"]),
    ("Database backups run nightly at 02:00 UTC and are kept for 30 days", ["db"]),
    ("The mobile app's minimum supported iOS version is 16", ["mobile"]),
    ("Carol adopted a golden retriever named Biscuit last spring", ["carol"]),
    ("The flaky checkout test needed a longer timeout of 30 seconds", ["ci"]),
    ("We use PostgreSQL 15 for the main store and Redis for caching", ["db"]),
    ("The quarterly planning meeting is in the Oslo office", ["planning"]),
    ("User prefers answers in short bullet points", ["preference"]),
    ("测试环境的数据库地址是 db-test.internal，端口 5432", ["数据库"]),
    ("张三负责支付模块，有问题找他", ["支付"]),
    ("每周五下午三点开周会，地点在三楼会议室", ["会议"]),
    ("用户喜欢喝美式咖啡，不加糖", ["偏好"]),
    ("发布流程：先合并到 main，再打标签，最后由流水线部署", ["发布"]),
    ("报销需要在每月 25 号之前提交发票", ["报销"]),
    ("李四下个月去上海出差，住在浦东", ["出差"]),
    ("服务器磁盘告警阈值设为 85%", ["告警"]),
    ("公司年会定在一月十八号，在杭州举行", ["年会"]),
    ("新员工入职第一天需要领取门禁卡和笔记本电脑", ["入职"]),
]

RELATED = [
    "which cluster is staging?",
    "when do we deploy to production?",
    "what font does Alice like?",
    "how does billing reach Stripe?",
    "when does on-call rotate?",
    "how do I roll back a release?",
    "is Bob allergic to anything?",
    "how to reset my VPN password",
    "how long are database backups kept?",
    "what iOS version do we support?",
    "what is the name of Carol's dog?",
    "why was the checkout test flaky?",
    "which database do we use?",
    "where is quarterly planning held?",
    "how should answers be formatted for the user?",
    "eks-stg-2",
    "peanuts",
    "测试数据库的地址是什么？",
    "支付模块谁负责？",
    "周会什么时候开？",
    "用户喝什么咖啡？",
    "发布流程是怎样的？",
    "发票什么时候交？",
    "李四去哪里出差？",
    "磁盘告警阈值是多少",
    "年会在哪里办？",
    "入职第一天要领什么？",
    "谁负责支付？",
    "staging 集群是哪个？",
    "数据库备份保留多久？",
    # across languages, few shared words
    "who is in charge of the payment module?",
    "what coffee does the user drink?",
    "where is the annual company party?",
    "谁对花生过敏？",
    "VPN 密码怎么重置？",
    "生产环境什么时候发布？",
    "what should new hires collect on day one?",
    "卡罗尔的狗叫什么名字？",
]

UNRELATED = [
    "what is the capital of Australia?",
    "how do I bake sourdough bread?",
    "who won the 1998 football world cup?",
    "recommend a good science fiction novel",
    "how many moons does Jupiter have?",
    "what's the best way to learn the violin?",
    "how do I change a flat bicycle tyre?",
    "translate 'good night' into French",
    "what is the boiling point of ethanol?",
    "how tall is Mount Kilimanjaro?",
    "explain quantum entanglement simply",
    "tips for growing tomatoes on a balcony",
    "what time zone is Tokyo in?",
    "how do I knit a scarf?",
    "what is the plot of Hamlet?",
    "which vitamins are in spinach?",
    "how do solar panels work?",
    "what's a good name for a cat?",
    "how do I tie a bow tie?",
    "what are the rules of chess castling?",
    "今天天气怎么样？",
    "怎么做红烧肉？",
    "推荐一部好看的电影",
    "月球离地球有多远？",
    "如何学习弹吉他？",
    "长城有多长？",
    "熊猫吃什么？",
    "怎么养多肉植物？",
    "世界上最高的山是哪座？",
    "唐诗三百首有哪些名篇？",
    "如何减肥最有效？",
    "火锅底料怎么炒？",
    "太阳系有几颗行星？",
    "怎么折纸飞机？",
    "围棋的基本规则是什么？",
    "北京烤鸭哪家好吃？",
    "怎样提高睡眠质量？",
    "足球比赛一场多少分钟？",
    "如何给自行车打气？",
    "猫为什么喜欢纸箱？",
    # sharing a common word with the store
    "what is the name of the tallest building in the world?",
    "best time of year to visit Iceland?",
    "how do I make my own font for a wedding card?",
    "什么时间去云南旅游最好？",
    "用户体验设计有哪些原则？",
]

CHAT = [
    # greetings
    "hi", "Hi!", "hello", "Hello there!", "hey", "hey hey", "Hey!!", "hiya", "yo",
    "good morning", "Good evening!", "morning!", "hi 👋", "Hello :)", "hey there 😊",
    "hi everyone", "hellooo", "hi hi", "howdy", "how are you?",
    "你好", "你好啊", "你好呀", "您好！", "哈喽", "嗨", "嗨嗨", "早上好", "早啊", "早安",
    "晚上好呀", "在吗？", "在不在", "大家好", "你好你好", "hello呀",
    # thanks
    "thanks", "Thanks!", "thank you", "Thank you so much!", "thanks a lot", "many thanks",
    "thx", "ty", "cheers", "ok thanks", "okay, thank you", "thanks again!", "great, thanks!",
    "thank you very much", "thanks 🙏", "much appreciated", "appreciate it", "tysm",
    "谢谢", "谢谢啦", "谢谢你！", "多谢多谢", "多谢", "感谢！", "非常感谢", "太感谢了",
    "谢了", "谢谢谢谢", "好的，谢谢", "辛苦了", "感谢感谢", "谢啦", "万分感谢", "谢谢🙏",
    # goodbyes
    "bye", "Bye!", "bye bye", "goodbye", "see you", "see you later", "see ya!",
    "good night", "talk to you later", "take care", "cya", "later!",
    "再见", "再见啦", "拜拜", "拜拜~", "回头见", "下次见", "晚安", "明天见", "先这样，再见",
    # acknowledgements
    "ok", "okay", "OK!", "got it", "great", "cool", "sounds good", "perfect", "alright",
    "understood", "noted", "👍", "nice", "awesome, thanks", "k",
    "好的", "好", "收到", "明白了", "知道了", "好的好的", "嗯嗯", "了解", "没问题", "行",
    "好嘞", "OK 收到",
]

QUESTIONS = [
    "thanks, but how do I roll back?",
    "你好，怎么重置密码？",
    "hi, which cluster is staging?",
    "hello, can you help me with the VPN?",
    "thanks! what about the billing service?",
    "ok, and when is the next deploy?",
    "谢谢，那报销什么时候截止？",
    "好的，那周会在哪里开？",
    "再见之前问一下，年会在哪？",
    "bye the way, who is on call?",
    "good morning, what's on the agenda today?",
    "what does ok mean in HTTP status codes?",
    "thank you notes: how do I write one?",
    "hello world program in python",
    "你好，请问数据库端口是多少",
    "收到的发票怎么报销？",
    "明白了，但是发布流程第二步是什么？",
    "ok google",
    "say hi to Bob",
    "hi-res images for the app store",
    "thanks for what?",
    "goodbye message template for customers",
    "是谁说的再见？",
    "早上几点开会？",
    "好的代码应该怎么写？",
    "谢谢你的回答，不过还有一个问题：怎么提交工单？",
    "what is cheers in Chinese?",
    "hey, why did the checkout test fail?",
    "cool down period for autoscaling?",
]


def floor_part(dump: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as home:
        settings = Settings.defaults(Path(home))
        with Memory(settings=settings) as mem:
            for text, tags in MEMORIES:
                mem.add(text, tags=tags)
            contents = {text: set(index_terms(text + " " + " ".join(tags)))
                        for text, tags in MEMORIES}

            def best(q: str) -> str:
                floor = mem.settings.retrieval.relevance_floor
                mem.settings.retrieval.relevance_floor = 0.0
                try:
                    hits = mem.search(q, top_k=10)
                finally:
                    mem.settings.retrieval.relevance_floor = floor
                if not hits:
                    return "-"
                terms = set(index_terms(q))
                top = max(hits, key=lambda h: 2 * h.scores.semantic - 1)
                cos = 2 * top.scores.semantic - 1
                kw = max(hits, key=lambda h: h.scores.keyword)
                cover = max(len(terms & contents.get(h.memory.content, set())) for h in hits)
                ev = max(h.scores.evidence or 0.0 for h in hits)
                return (f"ev={ev:.3f} n={len(hits)} cos={cos:.3f} kw={kw.scores.keyword:.2f} "
                        f"tag={max(h.scores.tag for h in hits):.2f} "
                        f"cover={cover}/{len(terms)} top={hits[0].memory.content[:30]!r}")

            related_ok = 0
            for q in RELATED:
                hits = mem.search(q)
                ok = bool(hits)
                related_ok += ok
                if dump or not ok:
                    print(f"REL {'ok ' if ok else 'MISS'} {q!r}: {best(q)}")
            unrelated_ok = 0
            for q in UNRELATED:
                hits = mem.search(q)
                ctx = mem.context(q)
                ask = mem.ask(q)
                ok = not hits and not ctx.strip() and "no memory matches" in ask.answer
                unrelated_ok += ok
                if dump or not ok:
                    print(f"UNR {'ok ' if ok else 'PAD'} {q!r}: {best(q)}")
    return related_ok / len(RELATED), unrelated_ok / len(UNRELATED)


def chat_part() -> tuple[float, int]:
    caught = [m for m in CHAT if chit_chat(m) is not None]
    skipped = [q for q in QUESTIONS if chit_chat(q) is not None]
    for m in CHAT:
        if chit_chat(m) is None:
            print(f"CHAT missed {m!r}")
    for q in skipped:
        print(f"QUESTION skipped {q!r}: {chit_chat(q)}")
    return len(caught) / len(CHAT), len(skipped)


def budget_part() -> list[str]:
    """The context budget: settings and overrides, as figures."""
    out = []
    with tempfile.TemporaryDirectory() as home:
        settings = Settings.defaults(Path(home))
        with Memory(settings=settings) as mem:
            for i in range(200):
                mem.add(f"Deploy note {i}: the staging deploy of service s{i} needs ticket "
                        f"T-{i} approved before " + "lorem ipsum " * 20)
            q = "staging deploy ticket"
            from varvemem.text import estimate_tokens
            out.append(f"default context tokens={estimate_tokens(mem.context(q, top_k=200))}")
            out.append(f"max_tokens=300 -> {estimate_tokens(mem.context(q, top_k=200, max_tokens=300))}")
            ctx = getattr(settings.context, "window_tokens", None)
            out.append(f"window_tokens setting: {ctx}")
    return out


def main() -> None:
    dump = "--dump" in sys.argv
    rel, unr = floor_part(dump)
    print(f"floor: related answered {rel:.1%}, unrelated answered with nothing {unr:.1%}")
    recall, skipped = chat_part()
    print(f"chit-chat: recall {recall:.1%} of {len(CHAT)}, real questions skipped "
          f"{skipped}/{len(QUESTIONS)}")
    if "--budget" in sys.argv:
        for line in budget_part():
            print("budget:", line)


if __name__ == "__main__":
    main()
