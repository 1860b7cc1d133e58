"""Small talk, in Chinese and English: the phrases of each kind (greeting, thanks, goodbye,
acknowledgement), the words that only colour them, and the emoji that say a kind or a doubt.
Read by the L3 intent router (:mod:`varvemem.engines.intent`)."""

from __future__ import annotations

# Emoji of doubt: a message holding one is not small talk ("🤔", "❓").
DOUBT = frozenset("🤔❓❔⁉😕🧐😟")
EMOJI_KIND = {"👋": "greeting", "🙏": "thanks", "🙇": "thanks", "💐": "thanks",
              "👍": "acknowledgement", "👌": "acknowledgement", "✅": "acknowledgement",
              "🆗": "acknowledgement", "👏": "acknowledgement"}

# The phrases of each kind, as regular expressions over the stripped text (spaces gone, so
# "thank you" is "thankyou"). Longer phrases are tried first.
PHRASES: dict[str, tuple[str, ...]] = {
    "greeting": (
        r"hi", r"hii", r"hello", r"helo", r"hey", r"heya", r"hiya", r"yo", r"howdy", r"greetings",
        r"good(morning|afternoon|evening|day)", r"morning", r"afternoon", r"evening", r"gm",
        r"sup", r"wh?at'?s?up",
        r"howareyou(doing)?(today)?", r"howareu", r"hru", r"howsitgoing", r"howdoyoudo",
        r"nicetomeetyou", r"nicetoseeyou", r"longtimenosee",
        r"你好", r"您好", r"你们好", r"大家好", r"哈喽", r"哈啰", r"嗨", r"嘿", r"喂",
        r"早上好", r"上午好", r"中午好", r"下午好", r"晚上好", r"早安", r"午安", r"早",
        r"在吗", r"在么", r"在嘛", r"在不在", r"你好吗", r"最近好吗", r"最近怎么样",
        r"好久不见", r"很高兴认识你", r"见到你很高兴",
        r"hi+ya", r"hey+a?", r"hello+", r"ello", r"greetings", r"salut", r"hola", r"bonjour",
        r"ni ?hao", r"morning(all)?", r"goodmorning", r"g'?day", r"anyonethere", r"anybodyhome",
        r"嗨喽", r"嗨咯", r"嘿嘿", r"哈喽", r"早啊", r"早呀", r"早早", r"有人吗", r"在不", r"在吗在吗",
        r"打扰了", r"打扰一下", r"你好你好", r"您好您好",
    ),
    "thanks": (
        r"thanks?", r"thankyou", r"thanku", r"thankyouu", r"thankya", r"thx", r"thnx", r"thanx",
        r"tnx", r"ty", r"tysm", r"tyvm", r"cheers", r"manythanks", r"muchappreciated",
        r"(i|really)?appreciate(it|that|you)?", r"appreciated",
        r"thanksforthehelp", r"thanksforyourhelp", r"thanksforeverything", r"thanksforthat",
        r"thankyouforthehelp", r"thankyouforyourhelp", r"thankyouforeverything",
        r"谢谢", r"谢了", r"谢", r"多谢", r"感谢", r"感激", r"感恩", r"辛苦了", r"辛苦", r"麻烦了",
        r"谢谢你", r"谢谢您", r"谢谢大家", r"谢谢啦", r"谢啦", r"thank",
        r"ta", r"tq", r"thks", r"thankz", r"thanksss?", r"muchobliged", r"obliged", r"kudos",
        r"you'?re(the|a)(best|star|legend|lifesaver|hero|genius)",
        r"youare(the|a)?(best|star|awesome|amazing|legend|lifesaver|great)",
        r"yourock", r"lifesaver", r"thatshelpful",
        r"(that|this|it)('?s|is|was)?(very|really|super|so)?helpful",
        r"(that|this|it)help(ed|s)(alot|me)?", r"helpful",
        r"thanksforthe(info|tip|tips|answer|reply|help)",
        r"thankyouforthe(info|tip|tips|answer|reply|help)",
        r"(谢谢|感谢|多谢)(你|您)?(的)?(帮忙|帮助|解答|回复|指导|耐心|分享|支持|建议|提醒|配合)",
        r"(麻烦|辛苦)(你|您)(了|啦)?", r"感谢感谢", r"感谢你", r"感谢您", r"谢谢谢谢", r"谢过", r"多谢啦",
        r"太感谢", r"万分感谢", r"感激不尽", r"有用", r"(很|非常|太)?有帮助", r"帮大忙了", r"么么哒",
    ),
    "goodbye": (
        r"bye", r"byebye", r"goodbye", r"bye?bye", r"seeyou", r"seeya", r"cya", r"cu", r"later",
        r"laters", r"seeyou(later|soon|tomorrow|around)", r"catchyoulater", r"talktoyoulater",
        r"talksoon", r"ttyl", r"takecare", r"farewell", r"(good)?night", r"nite", r"gn",
        r"have(a)?(nice|good|great)(day|evening|night|weekend|one)",
        r"再见", r"拜拜", r"拜", r"回头见", r"下次见", r"明天见", r"改天见", r"回见", r"晚安",
        r"先这样", r"就这样", r"我先走了", r"先走了", r"下线了", r"88",
        r"byefornow", r"peace(out)?", r"ciao", r"adios", r"cheerio", r"takeiteasy", r"nightnight",
        r"nightynight", r"sweetdreams", r"untilnexttime", r"seeyounexttime", r"gottago", r"gtg",
        r"signingoff", r"thatsall(fornow|fromme)?", r"thatllbeall", r"thatwillbeall",
        r"再会", r"下次聊", r"回聊", r"回头聊", r"改天聊", r"下次再聊", r"拜了", r"撤了", r"溜了",
        r"886", r"白白", r"bye",
    ),
    "acknowledgement": (
        r"ok", r"okay", r"okey", r"okie", r"okies", r"k", r"kk", r"gotit", r"got", r"understood",
        r"noted", r"cool", r"great", r"nice", r"awesome", r"perfect", r"alright", r"allright",
        r"sure", r"fine", r"good", r"soundsgood", r"soundsgreat", r"makessense", r"excellent",
        r"wonderful", r"brilliant", r"super", r"lovely", r"neat", r"gotcha", r"roger(that)?",
        r"willdo", r"isee", r"haha", r"lol", r"yay", r"wow",
        r"好的", r"好滴", r"好嘞", r"好吧", r"好", r"行", r"行吧", r"可以", r"收到", r"明白",
        r"明白了", r"知道了", r"了解", r"懂了", r"嗯", r"恩", r"哦", r"噢", r"没问题", r"妥", r"棒",
        r"太棒了", r"厉害", r"不错", r"哈哈", r"嘻嘻", r"原来如此",
        r"np", r"noproblem", r"noprob", r"noworries", r"nw", r"allgood", r"allset", r"allclear",
        r"(nice|good|great)(one|job|work|stuff)", r"welldone", r"sweet", r"fairenough",
        r"goodtoknow", r"surething", r"sure", r"okiedokie", r"okeydokey", r"okdoke", r"yep", r"yup",
        r"yes", r"yeah", r"ya", r"righto", r"right", r"ack", r"copythat", r"onit",
        r"that(did|does)it", r"that('?s)?(it|perfect|great|awesome|fine|cool|all)", r"thatworks",
        r"(that|it)worked", r"worksnow", r"workednow", r"(problem)?solved", r"fixed", r"gotitthanks",
        r"ok(ay)?(cool|great|good|then)", r"amazing", r"fantastic", r"glorious", r"splendid",
        r"好哒", r"好哦", r"好呀", r"好啊", r"好了", r"好吧好吧", r"可以了", r"行了", r"妥了", r"ok了",
        r"了解了", r"明白啦", r"懂啦", r"清楚了", r"收到啦", r"收到收到", r"解决了", r"搞定了",
        r"搞定", r"成功了", r"没事了", r"没关系", r"不客气", r"太好了", r"赞", r"点赞", r"牛",
        r"稳", r"nice", r"完美", r"漂亮", r"可以的", r"对", r"对的", r"是的", r"嗯呢",
    ),
}
# Words that only colour a small-talk phrase: particles, intensifiers, address, "and".
FILLERS = (
    r"啊", r"呀", r"啦", r"哦", r"喔", r"哈", r"嘛", r"吧", r"哟", r"咯", r"了", r"呢", r"滴", r"哇",
    r"非常", r"十分", r"万分", r"太", r"真", r"真是", r"真的", r"超级", r"超", r"特别", r"实在",
    r"你", r"您", r"大家", r"各位", r"朋友", r"亲", r"老师", r"同学", r"大佬", r"老板", r"兄弟",
    r"小哥", r"小姐姐", r"客服", r"亲爱的", r"哥", r"姐", r"助手", r"机器人", r"哈", r"嘿",
    r"啊啊", r"哈哈哈", r"嘻", r"嗷", r"哒", r"捏", r"哈喽", r"一下", r"一切",
    r"so", r"very", r"really", r"much", r"alot", r"lots", r"tons", r"loads", r"heaps", r"amillion",
    r"again", r"anyway", r"and", r"oh", r"ah", r"well", r"man", r"mate", r"dude", r"buddy",
    r"friend", r"there", r"all", r"everyone", r"everybody", r"guys", r"folks", r"team", r"bot",
    r"now", r"then", r"for", r"you", r"to", r"too", r"million", r"bunch", r"ton", r"heaps",
    r"sir", r"madam", r"maam", r"boss", r"pal", r"bro", r"fam", r"everybody", r"y'?all",
    r"again", r"indeed", r"truly", r"super", r"totally", r"absolutely", r"definitely", r"great",
    r"it", r"that", r"this", r"me", r"of", r"the", r"a", r"kind", r"ever", r"loads",
)

