"""Supersession on sentence pairs written outside the behaviour benchmark's generator.

20 updates and 12 distinct pairs in English and Chinese, on attributes the generator does not
use (CI images, managers, freeze days, TTLs, phone numbers, seats, CDNs, timeouts). Each pair
goes into a fresh home; prints the misses and the two counts. A check of how the claim rules
generalise, not a tuning set: do not add to the lexicon for these sentences.

    .venv/bin/python bench/dev_supersede_fresh.py
"""
import tempfile

from varvemem import Memory

UPDATES = [
 ("Our CI runners are on ubuntu-22", "CI runners now run ubuntu-24"),
 ("The nightly backup goes to bucket bk-old", "Nightly backups land in bk-new these days"),
 ("My manager is Laura", "I report to Chen now"),
 ("The wiki lives at wiki.acme.io", "The wiki's address is docs.acme.io"),
 ("Deploys are frozen on Fridays", "Deploy freeze is on Thursdays"),
 ("The API timeout is 30s", "We set the API timeout to 45s"),
 ("The cache TTL for sessions is 600 seconds", "Session cache TTL: 900 seconds"),
 ("Sam leads the mobile team", "The mobile team lead is Ana"),
 ("The build uses Node 18", "The build runs on Node 20"),
 ("The replicas of the search API: 3", "The search API runs 5 replicas"),
 ("我的工位在 7 楼", "我的工位换到 9 楼了"),
 ("测试服务器的 IP 是 10.0.0.5", "测试服务器 IP 现在是 10.0.0.9"),
 ("周报每周五下午交", "周报改成每周一上午交"),
 ("前端组长是刘洋", "前端组的组长是陈晨"),
 ("CDN 用的是阿里云", "CDN 换成腾讯云了"),
 ("网关超时时间是 30 秒", "网关的超时设置为 60 秒"),
 ("日志保留 7 天", "日志现在保留 30 天"),
 ("我用的手机号是 138 1111 2222", "我的手机号换成了 139 3333 4444"),
 ("订单库的副本数是 2", "订单库副本数调到 4"),
 ("运维值班电话 400-100-200", "运维值班电话改为 400-100-300"),
]
DISTINCT = [
 ("The API timeout is 30s", "The DB timeout is 5s"),
 ("Laura manages the web team", "Chen manages the data team"),
 ("Staging DB is pg-stg-1", "Production DB is pg-prod-1"),
 ("Order #4411 shipped on 2026-05-02 for 120 USD", "Order #4412 shipped on 2026-05-02 for 120 USD"),
 ("The EU cluster has 12 nodes", "The US cluster has 20 nodes"),
 ("Alice's laptop is a ThinkPad", "Bob's laptop is a MacBook"),
 ("Backups of the wiki run at 02:00", "Backups of the CRM run at 03:00"),
 ("前端组长是刘洋", "后端组长是陈晨"),
 ("北京机房有 40 台服务器", "上海机房有 25 台服务器"),
 ("报销单 R-10，交通费，35 元，2026年3月1日", "报销单 R-11，交通费，35 元，2026年3月1日"),
 ("测试环境的 Redis 是 6.2", "生产环境的 Redis 是 7.0"),
 ("张伟的生日是 5月3日", "李娜的生日是 8月9日"),
]


def main() -> None:
    caught = 0
    for old, new in UPDATES:
        mem = Memory(home=tempfile.mkdtemp())
        a, b = mem.add(old), mem.add(new)
        if a.memory_id in b.superseded:
            caught += 1
        else:
            print("missed update:", old, "=>", new)
    print("updates superseded", caught, "/", len(UPDATES))
    wrong = 0
    for old, new in DISTINCT:
        mem = Memory(home=tempfile.mkdtemp())
        a, b = mem.add(old), mem.add(new)
        if a.memory_id in b.superseded or a.memory_id == b.memory_id:
            wrong += 1
            print("wrongly superseded or merged:", old, "=>", new)
    print("distinct pairs wrong", wrong, "/", len(DISTINCT))


if __name__ == "__main__":
    main()
