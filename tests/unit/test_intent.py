"""Chit-chat rules (L3): the common small talk of both languages is skipped, a real question
never is, whatever small talk surrounds it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from varvemem.engines.intent import chit_chat


@pytest.mark.parametrize("text,kind", [
    ("你好啊", "greeting"), ("哈喽哈喽～", "greeting"), ("早啊", "greeting"), ("有人吗", "greeting"),
    ("谢谢啦", "thanks"), ("多谢多谢", "thanks"), ("辛苦了", "thanks"), ("辛苦啦老师", "thanks"),
    ("谢谢老师！", "thanks"), ("感谢帮忙!", "thanks"), ("谢谢你的解答", "thanks"),
    ("麻烦你了", "thanks"), ("很有帮助，谢谢", "thanks"), ("感谢感谢🙏", "thanks"),
    ("再见啦", "goodbye"), ("回聊", "goodbye"), ("下次再聊～", "goodbye"), ("886", "goodbye"),
    ("好的收到", "acknowledgement"), ("嗯嗯好的", "acknowledgement"), ("搞定了！", "acknowledgement"),
    ("没关系", "acknowledgement"), ("好哒～～～", "acknowledgement"), ("OK了", "acknowledgement"),
    ("Thank you so much!", "thanks"), ("ok thanks", "thanks"), ("cheers", "thanks"),
    ("Thanks a million, that did it", "thanks"), ("np, thanks", "thanks"),
    ("you're the best!!", "thanks"), ("That was really helpful", "thanks"), ("ta", "thanks"),
    ("hiya!", "greeting"), ("morning all", "greeting"), ("gtg, bye", "goodbye"),
    ("peace out ✌️", "goodbye"), ("that's all for now", "goodbye"),
    ("np", "acknowledgement"), ("no worries", "acknowledgement"), ("nice one.", "acknowledgement"),
    ("all good", "acknowledgement"), ("yep, that works", "acknowledgement"),
    ("sure thing!!!", "acknowledgement"), ("👍👍", "acknowledgement"), ("😊", "acknowledgement"),
    ("ok!!!!", "acknowledgement"), ("good job", "acknowledgement"),
])
def test_the_common_forms_of_small_talk_are_skipped(text: str, kind: str) -> None:
    found = chit_chat(text)
    assert found is not None and found[0] == kind, (text, found)


@pytest.mark.parametrize("text", [
    "thanks, and what port does X use?", "你好，请问订单服务端口是多少", "谢谢，订单服务归谁管？",
    "收到，什么时候上线", "早上好，今天谁值班", "np, what's the region of the ledger api",
    "好了吗", "搞定了吗", "没事吧？", "it works?", "helpful links?", "help", "yes please",
    "🤔", "❓", "???", "...", "8080", "cheers, which branch do we ship from",
    "good night, one last thing: where are backups", "辛苦了，账单地址怎么改？",
])
def test_a_real_question_is_never_skipped(text: str) -> None:
    assert chit_chat(text) is None, text


SMALL_TALK = ["hi", "hello there", "thanks", "thank you so much", "ok", "ok thanks", "cheers",
              "great", "np", "bye", "你好", "您好呀", "谢谢", "谢谢啦", "多谢多谢", "好的", "收到",
              "辛苦了", "好的收到", "再见", "👍", "🙏", ""]
SEPARATORS = [", ", "! ", ". ", " - ", "，", "！", "。", " ", "～", "\n"]
SUBJECTS = ["the ledger api", "photo uploader", "sms gateway", "the VPN", "eks-prod-2",
            "账本接口", "短信网关", "订单服务", "VPN", "库存服务"]
QUESTIONS_EN = ["what port does {s} use?", "who owns {s}?", "where are the logs of {s}",
                "how do I restart {s}?", "which region is {s} in?", "is {s} down?",
                "why did {s} fail last night?", "when was {s} deployed?", "can you check {s}?",
                "what's the version of {s}", "{s} port?"]
QUESTIONS_ZH = ["{s}用哪个端口？", "{s}归谁负责？", "{s}的日志在哪", "怎么重启{s}？",
                "{s}在哪个地域", "{s}挂了吗？", "{s}昨晚为什么失败？", "{s}什么时候上线的？",
                "帮我看下{s}", "请问{s}是什么版本", "{s}端口多少"]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SMALL_TALK), st.sampled_from(SEPARATORS), st.sampled_from(SUBJECTS),
       st.sampled_from(QUESTIONS_EN + QUESTIONS_ZH), st.booleans(), st.sampled_from(SMALL_TALK))
def test_a_question_about_a_subject_is_never_skipped(before: str, sep: str, subject: str,
                                                     question: str, upper: bool,
                                                     after: str) -> None:
    q = question.format(s=subject)
    text = f"{before}{sep}{q.upper() if upper else q}{sep}{after}"
    assert chit_chat(text) is None, text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([s for s in SMALL_TALK if s]), min_size=1, max_size=3),
       st.sampled_from(SEPARATORS), st.sampled_from(["", "!", "!!!", "~", "～～", "。。。", " 😊"]))
def test_small_talk_stays_small_talk_in_any_combination(parts: list[str], sep: str,
                                                        tail: str) -> None:
    text = sep.join(parts) + tail
    if len("".join(parts)) <= 30:
        assert chit_chat(text) is not None, text
