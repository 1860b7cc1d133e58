"""The families where a later statement changes an earlier one: ``update`` (a new value, no
cue word), ``transition`` (a change stated with its cue), ``after_change`` (a plain value
after a change) and ``negation`` (something no longer used).
"""

from __future__ import annotations

import random

from .vocabulary import (
    ATTRS,
    CACHES,
    QUEUES,
    Case,
)
from .vocabulary import fill as _fill
from .vocabulary import langs as _langs
from .vocabulary import svc as _svc
from .vocabulary import values as _values

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
