"""The FAQ reuse confidence: calibrated on its own generated set, vetoes on what a question
asks, monotone in the cosine."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from varvemem import Settings
from varvemem.embeddings.usem3 import USEEmbedder
from varvemem.engines import faq_calibration as fc
from varvemem.engines.faq_confidence import Confidence, calibrations, confidence, decide

THRESHOLD = Settings.load().faq.reuse_confidence


@pytest.fixture(scope="module")
def calibration_set() -> tuple[list[fc.Example], dict[int, float]]:
    examples = fc.generate(7)
    cos = fc.cosines(examples, USEEmbedder().embed_documents)
    return examples, dict(zip(map(id, examples), cos))


def test_precision_on_the_held_apart_slice(calibration_set) -> None:
    examples, cos = calibration_set
    _, held = fc.split(examples, 0.3)
    res = fc.evaluate(held, [cos[id(e)] for e in held], calibrations(), THRESHOLD)
    for lang in ("en", "zh"):
        assert res[lang]["precision"] >= 0.99, res
        assert res[lang]["recall"] >= 0.9, res


def test_the_stored_coefficients_are_what_the_fit_gives(calibration_set) -> None:
    """faq_calibration.json is the output of bench/fit_faq_confidence.py, not hand edits."""
    examples, cos = calibration_set
    fit, _ = fc.split(examples, 0.3)
    table = fc.fit(fit, [cos[id(e)] for e in fit])
    for lang, cal in calibrations().items():
        assert table[lang].bias == pytest.approx(cal.bias, abs=1e-3)
        for k, w in cal.weights.items():
            assert table[lang].weights[k] == pytest.approx(w, abs=1e-3)


@pytest.mark.parametrize("question,stored", [
    ("What port does the ledger api use?", "Which region is the ledger api in?"),
    ("Who owns the sms gateway?", "What version is the sms gateway on?"),
    ("账本接口用哪个端口？", "账本接口在哪个地域？"),
    ("短信网关归谁负责？", "短信网关的版本是多少"),
    ("How do I export my mailbox?", "How do I archive my mailbox?"),
    ("Can I cancel a room booking?", "How do I book a room?"),
    ("怎么导出邮箱？", "怎么归档邮箱？"),
    ("How do I reset my SSH key?", "How do I reset my API key?"),
    ("怎么重置SSH 密钥？", "怎么重置API 密钥？"),
    ("What runs on port 8080?", "What runs on port 9090?"),
    ("第3版合同怎么下载？", "第4版合同怎么下载？"),
    ("Which Kafka version runs in staging?", "Which Kafka version runs in production?"),
    ("预发环境的 Kafka 是什么版本？", "生产环境的 Kafka 是什么版本？"),
    ("How can I clone my meeting notes?", "How do I clone my notes?"),
    ("How do I reset my guest wifi password?", "How do I reset my wifi password?"),
])
def test_another_attribute_action_value_or_name_vetoes_reuse(question: str, stored: str) -> None:
    conf = confidence(question, stored, 0.99)
    assert conf.veto and conf.value == 0.0
    assert not decide(conf, THRESHOLD, (0.0, 1.0), lambda: 1.0, 0.5)  # a second model too


@pytest.mark.parametrize("question,stored", [
    ("how can I rotate the access token", "How do I rotate my access token?"),
    ("Who is responsible for the quota keeper?", "Who owns the quota keeper?"),
    ("访问令牌该怎么轮换？", "怎么轮换访问令牌？"),
    ("配额服务由谁维护", "配额服务的负责人是谁？"),
])
def test_paraphrases_are_not_vetoed(question: str, stored: str) -> None:
    conf = confidence(question, stored, 0.9)
    assert not conf.veto and conf.value >= THRESHOLD, conf


def test_equal_questions_are_certain() -> None:
    conf = confidence("How do I rotate my token?", "how do I rotate my token", 0.97)
    assert conf.value == 1.0 and conf.parts["equal"] == 1.0


def test_the_explanation_names_the_parts() -> None:
    out = confidence("What port does the ledger api use?", "ledger api port?", 0.8).explain()
    assert {"confidence", "lang", "cosine", "overlap", "swapped", "extra"} <= set(out)
    assert "veto" in confidence("ledger api port?", "ledger api region?", 0.8).explain()


QUESTIONS = [e.question for e in fc.generate(3, 6)] + [
    "How do I reset my password?", "怎么重置密码？", "what port is the admin console on",
    "", "???", "thanks",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(QUESTIONS), st.sampled_from(QUESTIONS),
       st.floats(-1.0, 1.0), st.floats(-1.0, 1.0))
def test_a_higher_cosine_never_lowers_the_confidence(a: str, b: str, c1: float,
                                                     c2: float) -> None:
    lo, hi = sorted((c1, c2))
    assert confidence(a, b, lo).value <= confidence(a, b, hi).value


def test_the_second_opinion_decides_only_in_the_gray_zone() -> None:
    gray = (0.5, 0.95)
    asked: list[bool] = []

    def second(value: float) -> float:
        asked.append(True)
        return value

    mid = Confidence(0.7, "en", {"cosine": 0.8})
    assert decide(mid, 0.8, gray, lambda: second(0.9), 0.85)  # under the threshold, yet yes
    assert not decide(Confidence(0.9, "en", {}), 0.8, gray, lambda: second(0.5), 0.85)
    assert decide(Confidence(0.97, "en", {}), 0.8, gray, lambda: second(0.1), 0.85)
    assert len(asked) == 2 and mid.parts["second_cosine"] == 0.9
    assert not decide(Confidence(0.4, "en", {}), 0.8, gray, lambda: second(1.0), 0.85)
    assert decide(Confidence(0.9, "en", {}), 0.8, gray, lambda: None, 0.85)  # no opinion
