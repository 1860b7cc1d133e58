"""Stop words for the analyser. Plain data, so a deployment can read what is dropped."""

from __future__ import annotations

ENGLISH: frozenset[str] = frozenset("""
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each few for from further had hadn't has hasn't have haven't having he he'd
he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
or other ought our ours ourselves out over own same shan't she she'd she'll she's should
shouldn't so some such than that that's the their theirs them themselves then there there's
these they they'd they'll they're they've this those through to too under until up very was
wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours
yourself yourselves s t d ll m re ve just also
""".split())

# Whole words first (matched greedily inside a CJK run), then single characters.
CHINESE_WORDS: tuple[str, ...] = (
    "我们", "你们", "他们", "她们", "它们", "这个", "那个", "这些", "那些", "什么", "怎么",
    "怎样", "如何", "为什么", "哪里", "哪个", "可以", "应该", "需要", "已经", "还是", "或者",
    "因为", "所以", "但是", "然后", "如果", "就是", "一个", "一下", "没有", "不是", "的话",
    "自己", "这样", "那样", "时候", "现在", "请问",
)
CHINESE_CHARS: frozenset[str] = frozenset(
    "的了是在和与及或也就都而着过吗呢吧啊呀哦嗯么之其把被让给向从对我你他她它这那有个"
)
