"""The families that must not supersede or merge: ``distinct`` (records that differ in a
subject, a user, an environment, an id, an amount or a date) and ``near_duplicate`` (the
same text restated: case, width, punctuation, spacing, a particle).
"""

from __future__ import annotations

import random
from typing import Any

from .asking import FAQ_OBJECTS, FAQ_Q_EN, FAQ_Q_ZH, FAQ_VERBS
from .vocabulary import (
    ATTRS,
    CITIES,
    COMPONENTS,
    EDITORS,
    ENVS,
    SERVICES,
    VERSION_EN,
    VERSION_ZH,
    Case,
)
from .vocabulary import fill as _fill
from .vocabulary import langs as _langs
from .vocabulary import pair as _pair
from .vocabulary import svc as _svc
from .vocabulary import values as _values
from .vocabulary import version as _version

# --- distinct: must not supersede or merge ---------------------------------------------------

PREF_EN = ["My favourite editor is {v}.", "I use {v} for coding", "I write code in {v}"]
PREF_ZH = ["我最喜欢的编辑器是{v}", "我平时用{v}写代码", "我写代码用{v}。"]
CITY_EN = ["I live in {v}.", "I'm based in {v}", "home for me is {v}"]
CITY_ZH = ["我住在{v}", "我现在在{v}生活", "我家在{v}。"]
INVOICE_EN = ["Invoice {id} from {vendor}: {amount} EUR, due {date}.",
              "Received invoice {id} ({vendor}) for {amount} EUR, payable by {date}"]
INVOICE_ZH = ["发票 {id}，{vendor}，金额 {amount} 元，{date}到期", "收到{vendor}的发票 {id}，{amount} 元，{date}前付款"]  # noqa: E501 (a sentence reads best whole)
VENDORS_EN = ["ACME GmbH", "Northwind", "Globex", "Initech", "Umbrella Ltd", "Hooli", "Stark Supplies"]
VENDORS_ZH = ["华信科技", "顺达物流", "云图数据", "明远咨询", "东方印务", "新启软件", "恒通电子"]
TICKET_EN = ["Ticket {id}: disk almost full on {host}.", "{id} opened: {host} is out of inodes",
             "Ticket {id} - certificate on {host} expires soon"]
TICKET_ZH = ["工单 {id}：{host} 磁盘快满了", "{id} 已创建：{host} 内存告警", "工单 {id}，{host} 证书即将过期"]
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]


def _date(rng: random.Random, lang: str) -> str:
    m, d = rng.randint(1, 12), rng.randint(1, 28)
    return f"{d} {MONTHS_EN[m - 1]} 2026" if lang == "en" else f"2026年{m}月{d}日"


def gen_distinct(rng: random.Random, n: int) -> list[Case]:
    out = []
    kinds = ["subjects", "users", "environments", "id", "amount", "date", "ticket"]
    for i, lang in enumerate(_langs(n)):
        kind = kinds[i // 2 % len(kinds)]
        recs: list[dict[str, Any]] = []
        if kind == "subjects":
            attr = rng.choice(ATTRS)
            tpl = rng.choice(attr[lang])
            names = rng.sample(SERVICES, 2)
            v1, v2 = _values(attr, rng, lang)
            for (en, zh), v in zip(names, (v1, v2)):
                recs.append({"content": _fill(tpl, en if lang == "en" else zh, v)})
        elif kind == "users":
            tpls, pool = rng.choice([(PREF_EN if lang == "en" else PREF_ZH, EDITORS),
                                     (CITY_EN if lang == "en" else CITY_ZH,
                                      [c[0] if lang == "en" else c[1] for c in CITIES])])
            tpl = rng.choice(tpls)
            for u, v in zip(("u-ann", "u-bo"), rng.sample(pool, 2)):
                recs.append({"content": tpl.format(v=v), "user": u})
        elif kind == "environments":
            c = rng.choice(COMPONENTS)[0 if lang == "en" else 1]
            tpl = rng.choice(VERSION_EN if lang == "en" else VERSION_ZH)
            envs = rng.sample(ENVS, 2)
            v1, v2 = _pair(rng, _version)
            for e, v in zip(envs, (v1, v2)):
                recs.append({"content": tpl.format(c=c, e=e[0] if lang == "en" else e[1], v=v)})
        elif kind == "ticket":
            tpl = rng.choice(TICKET_EN if lang == "en" else TICKET_ZH)
            host = rng.choice(["web-{n}", "db-{n}", "cache-{n}", "node-{n}"]).format(
                n=rng.randint(1, 40))
            base = rng.randint(1000, 9000)
            prefix = rng.choice(["OPS", "INC", "SUP", "IT"])
            for k in range(3):
                recs.append({"content": tpl.format(id=f"{prefix}-{base + k}", host=host)})
        else:  # invoices that differ only in their id, their amount or their date
            tpl = rng.choice(INVOICE_EN if lang == "en" else INVOICE_ZH)
            vendor = rng.choice(VENDORS_EN if lang == "en" else VENDORS_ZH)
            num = rng.randint(1000, 9000)
            inv = rng.choice(["INV-{n}", "{n}", "FP{n}", "NO.{n}"])
            amount = rng.choice([120, 480, 1200, 3150, 990, 75, 2400])
            date = _date(rng, lang)
            for k in range(2):
                fields = {"id": inv.format(n=num), "vendor": vendor, "amount": str(amount),
                          "date": date}
                if kind == "id":
                    fields["id"] = inv.format(n=num + k)
                elif kind == "amount":
                    fields["amount"] = str(amount + k * rng.choice([10, 100, 1]))
                else:
                    fields["date"] = date if k == 0 else _date(rng, lang)
                    while k and fields["date"] == date:
                        fields["date"] = _date(rng, lang)
                recs.append({"content": tpl.format(**fields)})
        out.append({"family": "distinct", "lang": lang, "id": f"distinct-{i}",
                    "data": {"kind": kind, "records": recs}})
    return out


# --- near duplicates ---------------------------------------------------------------------------

def full_width(text: str) -> str:
    """ASCII letters, digits and punctuation as their full-width forms (space as U+3000)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else ("\u3000" if c == " " else c)
                   for c in text)


def _restate(rng: random.Random, text: str, lang: str, kind: str) -> str:
    if kind == "case":
        return text.upper() if rng.random() < 0.4 else (
            text.lower() if text != text.lower() else text.title())
    if kind == "width":
        return full_width(text)
    if kind == "punct":
        stripped = text.rstrip(".。?？!！")
        if stripped != text:
            tail = text[len(stripped):]
            swap = {".": "。", "。": ".", "?": "？", "？": "?", "!": "！", "！": "!"}
            return stripped + ("" if rng.random() < 0.5 else "".join(swap.get(c, c) for c in tail))
        return text + ("." if lang == "en" else rng.choice(["。", "！"]))
    if kind == "spacing":
        if lang == "zh" and " " in text:
            return text.replace(" ", "")
        if lang == "zh":
            return text.replace("，", "， ") if "，" in text else f" {text} "
        return "  ".join(text.split(" ")) + " "
    # a particle at the end (Chinese)
    stripped = text.rstrip("。？！?!.")
    return stripped + rng.choice(["吧", "了", "呢", "啊", "哦"]) + text[len(stripped):]




def _near_qa(rng: random.Random, lang: str) -> str:
    v, o = rng.choice(FAQ_VERBS), rng.choice(FAQ_OBJECTS)
    return (FAQ_Q_EN if lang == "en" else FAQ_Q_ZH).format(v=v[lang == "zh"], o=o[lang == "zh"])


def gen_near_duplicate(rng: random.Random, n: int) -> list[Case]:
    out = []
    for i, lang in enumerate(_langs(n)):
        kinds = ["case", "width", "punct", "spacing"] if lang == "en" else \
            ["width", "punct", "spacing", "particle"]
        kind = kinds[i // 2 % len(kinds)]
        target = "qa" if (i // 8) % 3 == 2 else "memory"
        if target == "qa":
            text = _near_qa(rng, lang)
        else:
            attr = rng.choice(ATTRS)
            text = _fill(rng.choice(attr[lang]), _svc(rng, lang), _values(attr, rng, lang)[0])
        other = _restate(rng, text, lang, kind)
        if other == text:  # e.g. upper case of a text without letters
            other = full_width(text)
        data: dict[str, Any] = {"kind": kind, "target": target, "a": text, "b": other}
        if target == "qa":
            data["answer"] = "See the runbook." if lang == "en" else "见运维手册。"
        out.append({"family": "near_duplicate", "lang": lang, "id": f"near_duplicate-{i}",
                    "data": data})
    return out
