"""Dev case set for offline supersession, merge guard and normalisation (zh and en).

Not a test suite: a measurement. Each case opens a fresh store, adds a few memories with the
default (offline) settings and checks one expectation. Run:

    PYTHONPATH=src python bench/dev_supersede.py [--verbose]

Families: frame (no cue word, same claim new value), transition (from A to B, A -> B, 迁到...),
negation (no longer / 不再), dialogue (a statement made in a session), distinct (different
subjects must NOT supersede), guard (near-duplicates whose values differ must NOT merge),
norm (case/width/punctuation variants are one memory / one Q&A pair), unknown (a transition from
a value nobody holds supersedes nothing and says so), read (two current hits with the same claim
and different values: the newer first, the older marked).
"""

from __future__ import annotations

import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from varvemem import Memory, Settings
from varvemem.embeddings.usem3 import USEEmbedder


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def tick(self) -> None:
        self.now += timedelta(hours=1)


@dataclass
class Case:
    family: str
    lang: str
    steps: list[tuple[str, dict[str, Any]]]
    check: str  # "supersede" | "keep" | "merge-one" | "no-merge" | "qa-one" | "unknown" | "read"
    query: str = ""


def _sup(lang: str, old: str, new: str, family: str = "frame", **kw: Any) -> Case:
    return Case(family, lang, [(old, kw.get("old_kw", {})), (new, kw.get("new_kw", {}))],
                "supersede")


def _keep(lang: str, a: str, b: str, family: str = "distinct") -> Case:
    return Case(family, lang, [(a, {}), (b, {})], "keep")


D = {"type": "dialogue", "session": "s1"}

CASES: list[Case] = [
    # -- frame: same claim, new value, no cue word --------------------------------------------
    _sup("en", "The staging cluster is eks-stg-3", "The staging cluster is eks-stg-4"),
    _sup("en", "The orders database host is db-orders-01.internal",
         "The orders database host is db-orders-07.internal"),
    _sup("en", "Our nginx ingress controller runs version 1.9.4",
         "Our nginx ingress controller runs version 1.10.1"),
    _sup("en", "The on-call engineer this week is Alice", "The on-call engineer this week is Bob"),
    _sup("en", "The release freeze starts on 2026-04-10", "The release freeze starts on 2026-04-17"),
    _sup("en", "The monthly cloud budget is $12,000", "The monthly cloud budget is $15,500"),
    _sup("en", "Redis maxmemory for the cache tier is 4gb", "Redis maxmemory for the cache tier is 8gb"),
    _sup("en", "The API rate limit per key is 600 requests per minute",
         "The API rate limit per key is 1200 requests per minute"),
    _sup("en", "INV-1042 was paid on 2026-02-03", "INV-1042 was paid on 2026-02-05"),
    _sup("en", "The VPN gateway address is 10.20.0.1", "The VPN gateway address is 10.20.0.9"),
    _sup("en", "Grafana dashboards live at grafana.ops.example.com",
         "Grafana dashboards live at grafana2.ops.example.com"),
    _sup("zh", "预发环境的集群是 eks-stg-3", "预发环境的集群是 eks-stg-5"),
    _sup("zh", "订单服务的数据库是 pg-orders-1", "订单服务的数据库是 pg-orders-2"),
    _sup("zh", "本周值班的是张伟", "本周值班的是李娜"),
    _sup("zh", "网关的版本是 v2.3.1", "网关的版本是 v2.4.0"),
    _sup("zh", "发布冻结期从 2026-04-10 开始", "发布冻结期从 2026-04-20 开始"),
    _sup("zh", "每月云预算是 12000 元", "每月云预算是 18000 元"),
    _sup("zh", "缓存层的最大内存是 4gb", "缓存层的最大内存是 16gb"),
    _sup("zh", "监控面板地址是 grafana.ops.example.cn", "监控面板地址是 grafana3.ops.example.cn"),
    _sup("zh", "接口限流是每分钟 600 次", "接口限流是每分钟 900 次"),
    # -- transitions -----------------------------------------------------------------------
    _sup("en", "The staging cluster is eks-stg-3", "Staging moved to eks-stg-6", "transition"),
    _sup("en", "The orders service stores data in pg-main-1",
         "We migrated the orders service from pg-main-1 to pg-main-2", "transition"),
    _sup("en", "CI runs on Jenkins", "We switched CI from Jenkins to GitHub Actions", "transition"),
    _sup("en", "The metrics backend is prometheus-a",
         "metrics backend: prometheus-a -> victoria-1", "transition"),
    _sup("en", "The artifact bucket is s3-artifacts-old",
         "Artifact bucket s3-artifacts-old → s3-artifacts-eu", "transition"),
    _sup("en", "Logs are shipped with fluentd-v1",
         "We replaced fluentd-v1 with vector-agent for log shipping", "transition"),
    _sup("en", "The billing job runs on worker-7",
         "The billing job was moved from worker-7 to worker-12", "transition"),
    _sup("en", "The search service uses es-cluster-2",
         "The search service migrated to es-cluster-5", "transition"),
    _sup("en", "Node pools use m5.large instances",
         "Node pools changed from m5.large to m6i.xlarge", "transition"),
    _sup("zh", "订单服务的数据在 pg-main-1 上", "订单服务已经从 pg-main-1 迁到 pg-main-3 了", "transition"),
    _sup("zh", "CI 用的是 Jenkins", "CI 由 Jenkins 改为 GitLab CI", "transition"),
    _sup("zh", "日志采集用 fluentd-v1", "日志采集换成 vector-agent 了", "transition"),
    _sup("zh", "预发环境的集群是 eks-stg-3", "预发环境已经迁到 eks-stg-8 了", "transition"),
    _sup("zh", "对象存储桶是 oss-bucket-a", "对象存储桶从 oss-bucket-a 换成 oss-bucket-b", "transition"),
    _sup("zh", "告警通道是 dingtalk-ops", "告警通道改成 feishu-ops", "transition"),
    _sup("zh", "镜像仓库是 harbor-1.corp", "镜像仓库 harbor-1.corp -> harbor-2.corp", "transition"),
    _sup("zh", "计费任务跑在 worker-7 上", "计费任务从 worker-7 迁移到 worker-9", "transition"),
    # -- negation -------------------------------------------------------------------------
    _sup("en", "We use Jenkins for nightly builds", "We no longer use Jenkins for nightly builds",
         "negation"),
    _sup("en", "The public API accepts v1 tokens", "The public API no longer accepts v1 tokens",
         "negation"),
    _sup("en", "Deploys on Fridays are allowed", "Deploys on Fridays are no longer allowed",
         "negation"),
    _sup("en", "Alice owns the payments service", "Alice no longer owns the payments service",
         "negation"),
    _sup("zh", "我们用 Jenkins 做夜间构建", "我们不再用 Jenkins 做夜间构建", "negation"),
    _sup("zh", "公共接口接受 v1 令牌", "公共接口不再接受 v1 令牌", "negation"),
    _sup("zh", "周五允许发布", "周五不再允许发布", "negation"),
    _sup("zh", "张伟负责支付服务", "张伟不再负责支付服务", "negation"),
    # -- dialogue -------------------------------------------------------------------------
    _sup("en", "The staging cluster is eks-stg-3", "we migrated staging from eks-stg-3 to eks-stg-9",
         "dialogue", new_kw=D),
    _sup("en", "The orders API is served from pg-orders-1",
         "btw we moved the orders API to pg-orders-4 yesterday", "dialogue", new_kw=D),
    _sup("en", "My team lead is Carol", "My team lead is Dave now", "dialogue",
         old_kw=D, new_kw=D),
    _sup("en", "The release branch is release-2026.03", "The release branch is release-2026.04",
         "dialogue", old_kw=D, new_kw=D),
    _sup("zh", "订单服务部署在 pg-orders-1", "订单服务已经迁到 pg-orders-6 了", "dialogue", new_kw=D),
    _sup("zh", "我的组长是王芳", "我的组长换成刘强了", "dialogue", old_kw=D, new_kw=D),
    _sup("zh", "发布分支是 release-2026.03", "发布分支是 release-2026.05", "dialogue",
         old_kw=D, new_kw=D),
    _sup("zh", "我们用 Jenkins 做构建", "我们不再用 Jenkins 做构建了", "dialogue", new_kw=D),
    # -- distinct subjects: must not supersede ----------------------------------------------
    _keep("en", "The orders service runs on pg-1", "The billing service runs on pg-2"),
    _keep("en", "orders-api runs on pg-1", "billing-api runs on pg-2"),
    _keep("en", "The staging cluster is eks-stg-3", "The production cluster is eks-prd-1"),
    _keep("en", "INV-1001 was paid on 2026-02-03", "INV-1002 was paid on 2026-02-04"),
    _keep("en", "Alice's desk is A-301", "Bob's desk is B-202"),
    _keep("en", "Staging uses Redis 7.2", "Production uses Redis 6.2"),
    _keep("en", "The EU region endpoint is api-eu.example.com",
          "The US region endpoint is api-us.example.com"),
    _keep("en", "Ticket OPS-311 is assigned to Alice", "Ticket OPS-312 is assigned to Bob"),
    _keep("zh", "订单服务部署在 pg-1 上", "计费服务部署在 pg-2 上"),
    _keep("zh", "预发环境的集群是 eks-stg-3", "生产环境的集群是 eks-prd-1"),
    _keep("zh", "发票 INV-2001 已于 2026-02-03 付款", "发票 INV-2002 已于 2026-02-04 付款"),
    _keep("zh", "张伟的工位是 A-301", "李娜的工位是 B-202"),
    _keep("zh", "工单 OPS-411 指派给张伟", "工单 OPS-412 指派给李娜"),
    _keep("zh", "华东区的入口是 api-east.example.cn", "华北区的入口是 api-north.example.cn"),
    Case("distinct", "en", [("The staging cluster is eks-stg-3", {"user": "u1"}),
                            ("The staging cluster is eks-stg-4", {"user": "u2"})], "keep"),
    Case("distinct", "zh", [("我的组长是王芳", {"user": "u1"}), ("我的组长是刘强", {"user": "u2"})],
         "keep"),
    _keep("en", "Production moved to eks-prd-2", "The staging cluster is eks-stg-3"),
    _keep("zh", "生产环境迁到 eks-prd-2 了", "预发环境的集群是 eks-stg-3"),
    # -- merge guard: near duplicates whose values differ must not merge --------------------
    Case("guard", "en", [(f"Invoice INV-10{n:02d} for ACME was paid on 2026-01-{n % 28 + 1:02d}",
                          {}) for n in range(20)], "no-merge"),
    Case("guard", "zh", [(f"发票 INV-30{n:02d} 已于 2026-01-{n % 28 + 1:02d} 付款", {})
                         for n in range(20)], "no-merge"),
    Case("guard", "en", [("Server web-01 has IP 10.0.0.11", {}),
                         ("Server web-02 has IP 10.0.0.12", {})], "no-merge"),
    Case("guard", "en", [("Release v2.3.1 shipped the login fix", {}),
                         ("Release v2.3.2 shipped the login fix", {})], "no-merge"),
    Case("guard", "zh", [("服务器 web-01 的地址是 10.0.0.11", {}),
                         ("服务器 web-02 的地址是 10.0.0.12", {})], "no-merge"),
    Case("guard", "zh", [("版本 v2.3.1 修复了登录问题", {}), ("版本 v2.3.2 修复了登录问题", {})],
         "no-merge"),
    # -- normalisation: one memory / one pair ---------------------------------------------
    Case("norm", "en", [("Deploy window is Tuesday 10:00-16:00 UTC", {}),
                        ("deploy window is Tuesday 10:00-16:00 UTC.", {})], "merge-one"),
    Case("norm", "en", [("Is the staging cluster eks-stg-3?", {}),
                        ("is the staging cluster eks-stg-3 ?", {})], "merge-one"),
    Case("norm", "en", [("Backups run nightly at 02:00", {}),
                        ("BACKUPS run nightly at 02:00!", {})], "merge-one"),
    Case("norm", "zh", [("备份每晚 02:00 执行。", {}), ("备份每晚 02:00 执行", {})], "merge-one"),
    Case("norm", "zh", [("预发集群是 eks-stg-3，对吗？", {}), ("预发集群是eks-stg-3,对吗?", {})],
         "merge-one"),
    Case("norm", "zh", [("ＣＩ 流水线用 GitLab。", {}), ("CI 流水线用 GitLab", {})], "merge-one"),
    Case("norm", "en", [("qa:How do I reset my password?|Open Settings > Security.", {}),
                        ("qa:how do I reset my password？|Settings > Security > Reset.", {})],
         "qa-one"),
    Case("norm", "en", [("qa:Where are the runbooks?|In the ops wiki.", {}),
                        ("qa:where are the runbooks|The ops wiki, runbooks section.", {})],
         "qa-one"),
    Case("norm", "zh", [("qa:如何提交工单？|在服务门户提交。", {}),
                        ("qa:如何提交工单?|在服务门户点击新建工单。", {})], "qa-one"),
    Case("norm", "zh", [("qa:审核流程需要几天？|3 个工作日。", {}),
                        ("qa:审核流程需要几天|一般 3 个工作日。", {})], "qa-one"),
    # -- unknown transition value ---------------------------------------------------------
    Case("unknown", "en", [("The staging cluster is eks-stg-3", {}),
                           ("We migrated staging from eks-stg-77 to eks-stg-9", {})], "unknown"),
    Case("unknown", "zh", [("预发环境的集群是 eks-stg-3", {}),
                           ("预发环境从 eks-stg-77 迁到 eks-stg-9 了", {})], "unknown"),
    # -- read-time conflicts (write-time rules off: the read path must still resolve) ------
    Case("read", "en", [("The staging cluster is eks-stg-3", {}),
                        ("The staging cluster is eks-stg-4", {})], "read",
         "which cluster is staging on?"),
    Case("read", "en", [("The orders database host is db-orders-01", {}),
                        ("The orders database host is db-orders-07", {})], "read",
         "orders database host"),
    Case("read", "zh", [("预发环境的集群是 eks-stg-3", {}), ("预发环境的集群是 eks-stg-5", {})],
         "read", "预发环境的集群是哪个"),
    Case("read", "zh", [("网关的版本是 v2.3.1", {}), ("网关的版本是 v2.4.0", {})], "read",
         "网关版本"),
]

# Round 2, written after the rules were tuned on the cases above (27 of 30 passed then; the three
# misses led to "swapped A for B", a CJK word boundary in holds() and "now" before a participle).
CASES += [
    _sup("en", "Our primary DNS resolver is 1.1.1.1", "Our primary DNS resolver is 9.9.9.9"),
    _sup("en", "The Kafka retention period is 7 days", "The Kafka retention period is 14 days"),
    _sup("en", "Production traffic goes through lb-prod-east",
         "Production traffic now goes through lb-prod-west"),
    _sup("en", "The default branch is master",
         "We renamed the default branch from master to main", "transition"),
    _sup("en", "Helm charts are published to chartmuseum-1",
         "Helm charts are now published to harbor-charts", "transition"),
    _sup("en", "The support rota lead is Hannah", "Support rota lead changed to Ibrahim", "transition"),
    _sup("en", "The frontend is built with webpack-4", "frontend build: webpack-4 => vite-5", "transition"),
    _sup("en", "Backups are kept in bucket bk-old",
         "we swapped bucket bk-old for bk-new last week", "transition"),
    _sup("en", "We page through Opsgenie", "We no longer page through Opsgenie", "negation"),
    _sup("en", "The search cluster has 6 nodes", "the search cluster has 9 nodes now", "dialogue", new_kw=D),
    _sup("zh", "主数据库是 mysql-01", "主数据库是 mysql-02"),
    _sup("zh", "日志保留 7 天", "日志保留 30 天"),
    _sup("zh", "默认分支是 master", "默认分支从 master 改成 main 了", "transition"),
    _sup("zh", "前端构建用 webpack-4", "前端构建改用 vite-5", "transition"),
    _sup("zh", "值班负责人是陈晨", "值班负责人换成孙悦了", "transition"),
    _sup("zh", "我们用 Opsgenie 发告警", "我们不再用 Opsgenie 发告警", "negation"),
    _sup("zh", "搜索集群有 6 个节点", "搜索集群现在有 9 个节点", "dialogue", new_kw=D),
    _sup("zh", "备份存放在 bk-old 桶", "备份已经迁到 bk-new 桶了", "transition"),
    _keep("en", "The search cluster has 6 nodes", "The cache cluster has 3 nodes"),
    _keep("en", "Alice's laptop is LT-0042", "Bob's laptop is LT-0043"),
    _keep("en", "PR-881 was merged on 2026-01-10", "PR-882 was merged on 2026-01-11"),
    _keep("en", "The Tokyo office opens at 09:00", "The Berlin office opens at 08:00"),
    _keep("en", "Caroline joined the book club on 3 March", "Caroline joined the hiking club on 9 March"),
    _keep("en", "We moved the standup to 10:00", "The retro is at 16:00"),
    _keep("zh", "搜索集群有 6 个节点", "缓存集群有 3 个节点"),
    _keep("zh", "陈晨的电脑是 LT-0042", "孙悦的电脑是 LT-0043"),
    _keep("zh", "东京办公室 09:00 开门", "柏林办公室 08:00 开门"),
    _keep("zh", "合并请求 PR-881 于 2026-01-10 合并", "合并请求 PR-882 于 2026-01-11 合并"),
    Case("guard", "en", [(f"Host web-{n:02d} has IP 10.1.0.{n}", {}) for n in range(15)], "no-merge"),
    Case("guard", "zh", [(f"主机 web-{n:02d} 的地址是 10.1.0.{n}", {}) for n in range(15)], "no-merge"),
]

READ_OFF = {"update": {"supersede_rules": ["cue"]}}


def run_case(case: Case, embedder: USEEmbedder, root: Path) -> tuple[bool, str]:
    home = root / f"h{id(case)}"
    clock = Clock()
    try:
        settings = Settings.load(home=home, **(READ_OFF if case.check == "read" else {}))
    except Exception:  # the key does not exist yet (before the change)
        settings = Settings.load(home=home)
    with Memory(settings=settings, embedder=embedder, clock=clock) as mem:
        results = []
        for content, kw in case.steps:
            if content.startswith("qa:"):
                q, a = content[3:].split("|")
                results.append(mem.save_qa(q, a, 0.8))
            else:
                results.append(mem.add(content, **kw))
            clock.tick()
        if case.check == "supersede":
            old, new = results
            ok = old.memory_id in new.superseded and mem.get(old.memory_id).valid_to is not None
            return ok, f"superseded={new.superseded} steps={new.steps.get('supersede')}"
        if case.check == "keep":
            a, b = results
            ok = not b.superseded and mem.get(a.memory_id).valid_to is None \
                and b.status == "created"
            return ok, f"status={b.status} superseded={b.superseded}"
        if case.check == "no-merge":
            bad = [r for r in results if r.status != "created" or r.superseded]
            return not bad, f"{len(bad)} of {len(results)} merged/duplicate/superseding"
        if case.check == "merge-one":
            return results[1].status in ("duplicate", "merged"), f"status={results[1].status}"
        if case.check == "qa-one":
            n = len(mem.load_all_qa())
            return n == 1, f"{n} pairs"
        if case.check == "unknown":
            new = results[1]
            step = new.steps.get("supersede", "")
            ok = not new.superseded and "no memory holds" in step
            return ok, f"superseded={new.superseded} step={step!r}"
        if case.check == "read":
            old, new = results
            hits = mem.search(case.query)
            ids = [h.memory.memory_id for h in hits]
            if new.memory_id not in ids:
                return False, "newer not found"
            first = ids.index(new.memory_id) < ids.index(old.memory_id) \
                if old.memory_id in ids else True
            marked = all(getattr(h.scores, "conflict", None) for h in hits
                         if h.memory.memory_id == old.memory_id)
            return first and marked, f"newer first={first} older marked={marked}"
    raise ValueError(case.check)


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    embedder = USEEmbedder()
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            ok, info = run_case(case, embedder, Path(tmp))
            cell = table[(case.family, case.lang)]
            cell[0] += ok
            cell[1] += 1
            if verbose and not ok:
                print(f"FAIL [{case.family}/{case.lang}] {case.steps[-1][0][:60]!r}: {info}")
    total = [0, 0]
    print(f"{'family':<12}{'lang':<6}{'pass':>6}{'cases':>7}")
    for (fam, lang), (p, n) in sorted(table.items()):
        print(f"{fam:<12}{lang:<6}{p:>6}{n:>7}")
        total[0] += p
        total[1] += n
    print(f"{'all':<18}{total[0]:>6}{total[1]:>7}")
    return 0


check: Callable[[list[str]], int] = main
if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
