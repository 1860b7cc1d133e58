"""The behaviour benchmark's template cases: many subjects, values and phrasings, in Chinese and
English, drawn by a seeded ``random.Random`` (the same seed gives the same cases).

Each generator returns case dicts ``{"family", "lang", "id", "data"}``; ``data`` has the same
shape as the hand-written cases in ``behaviour_cases.json`` (see :mod:`.behaviour`).

The generators live in submodules by family (:mod:`.changes`, :mod:`.distinct`,
:mod:`.asking`, :mod:`.recall`, :mod:`.learned`) over the shared :mod:`.vocabulary`;
this package re-exports them and draws every family (:func:`generate`).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .asking import (
    ABSENT_EN,
    ABSENT_SUBJECTS,
    ABSENT_ZH,
    CHAT_EN,
    CHAT_ZH,
    DECOR_EN,
    DECOR_ZH,
    FAQ_A_EN,
    FAQ_A_ZH,
    FAQ_OBJECTS,
    FAQ_PARA_EN,
    FAQ_PARA_ZH,
    FAQ_Q_EN,
    FAQ_Q_ZH,
    FAQ_VERBS,
    OFFTOPIC_EN,
    OFFTOPIC_ZH,
    REAL_EN,
    REAL_ZH,
    gen_chit_chat,
    gen_faq_reuse,
    gen_unrelated,
)
from .changes import (
    NEG_EN,
    NEG_OLD_EN,
    NEG_OLD_ZH,
    NEG_Q_EN,
    NEG_Q_ZH,
    NEG_ZH,
    ROLES,
    TRANSITION_EN,
    TRANSITION_ZH,
    gen_after_change,
    gen_negation,
    gen_transition,
    gen_update,
)
from .distinct import (
    CITY_EN,
    CITY_ZH,
    INVOICE_EN,
    INVOICE_ZH,
    MONTHS_EN,
    PREF_EN,
    PREF_ZH,
    TICKET_EN,
    TICKET_ZH,
    VENDORS_EN,
    VENDORS_ZH,
    full_width,
    gen_distinct,
    gen_near_duplicate,
)
from .learned import CHOICES, DECISION_ROLES, LOG_FIELDS, PARAMS, STORY_KINDS, SYMPTOMS, gen_learned
from .recall import (
    CROSS_STORE,
    DISTRACT_EN,
    DISTRACT_ZH,
    DONE_EN,
    DONE_ZH,
    LANG_PAIR,
    Q_TIME_EN,
    Q_TIME_ZH,
    THINGS_EN,
    THINGS_ZH,
    TIME_WORDS_EN,
    TIME_WORDS_ZH,
    cross_bank,
    gen_cross_language,
    gen_time_words,
)
from .vocabulary import (
    ATTRS,
    CACHES,
    CITIES,
    COMPONENTS,
    DAYS,
    EDITORS,
    ENVS,
    PEOPLE_EN,
    PEOPLE_ZH,
    QUEUES,
    REGIONS,
    SERVICES,
    VERSION_EN,
    VERSION_Q_EN,
    VERSION_Q_ZH,
    VERSION_ZH,
    Case,
)

__all__ = [
    "ABSENT_EN",
    "ABSENT_SUBJECTS",
    "ABSENT_ZH",
    "ATTRS",
    "CACHES",
    "CHAT_EN",
    "CHAT_ZH",
    "CHOICES",
    "CITIES",
    "CITY_EN",
    "CITY_ZH",
    "COMPONENTS",
    "CROSS_STORE",
    "DAYS",
    "DECISION_ROLES",
    "DECOR_EN",
    "DECOR_ZH",
    "DISTRACT_EN",
    "DISTRACT_ZH",
    "DONE_EN",
    "DONE_ZH",
    "EDITORS",
    "ENVS",
    "FAQ_A_EN",
    "FAQ_A_ZH",
    "FAQ_OBJECTS",
    "FAQ_PARA_EN",
    "FAQ_PARA_ZH",
    "FAQ_Q_EN",
    "FAQ_Q_ZH",
    "FAQ_VERBS",
    "GENERATORS",
    "INVOICE_EN",
    "INVOICE_ZH",
    "LANG_PAIR",
    "LOG_FIELDS",
    "MONTHS_EN",
    "NEG_EN",
    "NEG_OLD_EN",
    "NEG_OLD_ZH",
    "NEG_Q_EN",
    "NEG_Q_ZH",
    "NEG_ZH",
    "OFFTOPIC_EN",
    "OFFTOPIC_ZH",
    "PARAMS",
    "PEOPLE_EN",
    "PEOPLE_ZH",
    "PREF_EN",
    "PREF_ZH",
    "QUEUES",
    "Q_TIME_EN",
    "Q_TIME_ZH",
    "REAL_EN",
    "REAL_ZH",
    "REGIONS",
    "ROLES",
    "SERVICES",
    "STORY_KINDS",
    "SYMPTOMS",
    "THINGS_EN",
    "THINGS_ZH",
    "TICKET_EN",
    "TICKET_ZH",
    "TIME_WORDS_EN",
    "TIME_WORDS_ZH",
    "TRANSITION_EN",
    "TRANSITION_ZH",
    "VENDORS_EN",
    "VENDORS_ZH",
    "VERSION_EN",
    "VERSION_Q_EN",
    "VERSION_Q_ZH",
    "VERSION_ZH",
    "Case",
    "cross_bank",
    "full_width",
    "gen_after_change",
    "gen_chit_chat",
    "gen_cross_language",
    "gen_distinct",
    "gen_faq_reuse",
    "gen_learned",
    "gen_near_duplicate",
    "gen_negation",
    "gen_time_words",
    "gen_transition",
    "gen_unrelated",
    "gen_update",
    "generate",
]


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
