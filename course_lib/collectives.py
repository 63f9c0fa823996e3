"""Links between chips and the collectives that run over them, in the alpha-beta cost model.

Moving ``S`` bytes once over a link of per-direction bandwidth ``beta`` (bytes/s) and per-message
latency ``alpha`` (s) takes

    t = alpha + S / beta

A ring collective over ``n`` ranks runs in synchronous steps; in each step every rank sends one
chunk of ``S / n`` bytes to its right-hand neighbour, so

    all-reduce      2(n-1) steps   each rank sends 2(n-1)/n * S    t = 2(n-1) alpha + 2(n-1)/n * S/beta
    reduce-scatter   (n-1) steps   each rank sends  (n-1)/n * S    t =  (n-1) alpha +  (n-1)/n * S/beta
    all-gather       (n-1) steps   each rank sends  (n-1)/n * S    t =  (n-1) alpha +  (n-1)/n * S/beta

where ``S`` is the size of the full tensor (the input of an all-reduce or reduce-scatter, the output
of an all-gather). An all-to-all over a switch (every rank keeps 1/n of its ``S`` and sends the rest)
is costed the same way as an all-gather. Patarasuk and Yuan (2009, "Bandwidth optimal all-reduce
algorithms for clusters of workstations", J. Parallel Distrib. Comput. 69(2)) prove 2(n-1)/n * S is
the least any all-reduce can send per rank; NCCL reports it as "bus bandwidth"
(NCCL tests, doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n for all-reduce).

:func:`simulate_ring_all_reduce` runs the algorithm on real arrays, chunk by chunk, and counts the
bytes every link carries, so the formula can be checked against a simulation. Bandwidths here are
per direction; the catalog stores NVLink and PCIe as both directions together, so they are halved.
"""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ._validate import check_array, check_choice, check_int, check_number, check_sequence
from .hardware import get_accelerator

__all__ = [
    "NIC_NDR_BANDWIDTH_BYTES_PER_S",
    "NIC_SOURCE",
    "STEP_LATENCY_S",
    "LATENCY_SOURCE",
    "COLLECTIVES",
    "Link",
    "interconnect_hierarchy",
    "get_link",
    "transfer_time_s",
    "collective_steps",
    "collective_bytes_per_rank",
    "collective_time_s",
    "RingTrace",
    "ring_chunk_sizes",
    "simulate_ring_reduce_scatter",
    "simulate_ring_all_gather",
    "simulate_ring_all_reduce",
    "ring_all_reduce_link_bytes",
    "simulated_time_s",
    "TpuPod",
    "tpu_pods",
    "get_tpu_pod",
    "TorusAllReduce",
    "torus_all_reduce",
]

#: InfiniBand NDR: 400 Gb/s per port and direction = 400e9 / 8 = 50e9 bytes/s.
#: A DGX H100 gives each of its 8 GPUs one single-port 400 Gb/s ConnectX-7 for the compute fabric.
NIC_NDR_BANDWIDTH_BYTES_PER_S = 400e9 / 8
NIC_SOURCE = ("NVIDIA ConnectX-7 adapter card user manual (NDR InfiniBand, 400 Gb/s per port); "
              "NVIDIA DGX H100 user guide, hardware overview (8 single-port ConnectX-7, one per GPU)")

#: Per-step latency (alpha) of a ring collective, seconds: NCCL's own cost model, ring algorithm,
#: "Simple" protocol, from the hwLat table in src/graph/tuning.cc of NCCL 2.17 (the release that
#: added the NVLS algorithm, before NVLS-Tree): NVLink 3.4 us, PCI 5.7 us, network 9.6 us. Newer
#: releases keep the NVLink and PCI figures and raise the network one to 14 us. These are a
#: library's tuned model constants, not datasheet figures: they set the scale (microseconds), not
#: an exact value. HBM is not a hop between chips: alpha 0.
STEP_LATENCY_S = {"hbm": 0.0, "nvlink": 3.4e-6, "pcie": 5.7e-6, "network": 9.6e-6}
LATENCY_SOURCE = "NVIDIA NCCL 2.17, src/graph/tuning.cc, hwLat[.][Ring][Simple]"

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "all_to_all")


@dataclass(frozen=True)
class Link:
    """One tier of the interconnect hierarchy as one chip sees it.

    ``bandwidth_bytes_per_s`` is per direction (what one chip can send while it also receives).
    """

    name: str
    tier: str
    bandwidth_bytes_per_s: float
    latency_s: float
    source: str

    def __post_init__(self):
        for field in ("name", "tier", "source"):
            if not isinstance(getattr(self, field), str):
                raise TypeError(f"{field} must be a string, got {getattr(self, field)!r}")
        object.__setattr__(self, "bandwidth_bytes_per_s", check_number(
            "bandwidth_bytes_per_s", self.bandwidth_bytes_per_s, min_value=0, allow_min=False))
        object.__setattr__(self, "latency_s", check_number("latency_s", self.latency_s, min_value=0))

    def transfer_time_s(self, nbytes) -> float:
        """alpha + S / beta: seconds to send ``nbytes`` once over this link."""
        return transfer_time_s(nbytes, self.bandwidth_bytes_per_s, self.latency_s)


def transfer_time_s(nbytes, bandwidth_bytes_per_s, latency_s=0.0) -> float:
    """Seconds to move ``nbytes`` once: alpha + S / beta.

    >>> transfer_time_s(2e9, 450e9)          # 2 GB over one direction of H100 NVLink
    0.0044444444444444444
    """
    s = check_number("nbytes", nbytes, min_value=0)
    bw = check_number("bandwidth_bytes_per_s", bandwidth_bytes_per_s, min_value=0, allow_min=False)
    alpha = check_number("latency_s", latency_s, min_value=0)
    return alpha + s / bw


def interconnect_hierarchy(accelerator="H100 SXM",
                           network_bandwidth_bytes_per_s=NIC_NDR_BANDWIDTH_BYTES_PER_S) -> list[Link]:
    """The tiers one chip talks over, fastest first: its HBM, chip-to-chip, host, network.

    Catalog figures for NVLink/ICI and PCIe are both directions together; halved here.
    The network tier is one NIC per chip (default: 400 Gb/s InfiniBand NDR, ``NIC_SOURCE``).
    """
    acc = get_accelerator(accelerator)
    net = check_number("network_bandwidth_bytes_per_s", network_bandwidth_bytes_per_s,
                       min_value=0, allow_min=False)
    links = [Link(f"HBM ({acc.mem_type})", "hbm", acc.mem_bandwidth, STEP_LATENCY_S["hbm"],
                  acc.source)]
    if acc.interconnect_bandwidth:
        links.append(Link(f"{acc.interconnect} (chip to chip)", "nvlink", acc.interconnect_bandwidth / 2,
                          STEP_LATENCY_S["nvlink"], acc.source))
    if acc.host_link_bandwidth:
        links.append(Link(f"{acc.host_link} (to host)", "pcie", acc.host_link_bandwidth / 2,
                          STEP_LATENCY_S["pcie"], acc.source))
    links.append(Link("InfiniBand NDR, one NIC per chip (between nodes)", "network", net,
                      STEP_LATENCY_S["network"], NIC_SOURCE))
    return links


def get_link(accelerator="H100 SXM", tier="nvlink",
             network_bandwidth_bytes_per_s=NIC_NDR_BANDWIDTH_BYTES_PER_S) -> Link:
    """One tier ('hbm', 'nvlink', 'pcie', 'network') of :func:`interconnect_hierarchy`.

    A chip without chip-to-chip links (an L4, an RTX 4090) talks to its peers over PCIe,
    so asking it for 'nvlink' returns its PCIe link.
    """
    tier = check_choice("tier", tier, ("hbm", "nvlink", "pcie", "network"))
    links = {link.tier: link for link in interconnect_hierarchy(accelerator, network_bandwidth_bytes_per_s)}
    if tier == "nvlink" and tier not in links and "pcie" in links:
        return links["pcie"]
    if tier not in links:
        raise ValueError(f"tier {tier!r} has no figure for {get_accelerator(accelerator).name}; "
                         f"it has {sorted(links)}")
    return links[tier]


def collective_steps(kind, n_ranks) -> int:
    """Synchronous ring steps: 2(n-1) for an all-reduce, n-1 for the others."""
    kind = check_choice("kind", kind, COLLECTIVES)
    n = check_int("n_ranks", n_ranks, min_value=1)
    return 2 * (n - 1) if kind == "all_reduce" else n - 1


def collective_bytes_per_rank(kind, nbytes, n_ranks) -> float:
    """Bytes each rank sends: 2(n-1)/n * S for an all-reduce, (n-1)/n * S for the others.

    ``nbytes`` (S) is the full tensor: all-reduce/reduce-scatter input, all-gather output,
    all-to-all input of one rank. 8 ranks all-reducing 1 GB each send 1.75 GB (= 2 * 7/8).
    """
    steps = collective_steps(kind, n_ranks)
    s = check_number("nbytes", nbytes, min_value=0)
    return steps * s / n_ranks


def _link_parameters(link, bandwidth_bytes_per_s, latency_s) -> tuple[float, float]:
    """(beta, alpha) from a :class:`Link`, or from a bandwidth and latency given directly."""
    if link is not None:
        if not isinstance(link, Link):
            raise TypeError(f"link must be a course_lib.collectives.Link, got {type(link).__name__}")
        bandwidth_bytes_per_s, latency_s = link.bandwidth_bytes_per_s, link.latency_s
    if bandwidth_bytes_per_s is None:
        raise TypeError("give link or bandwidth_bytes_per_s")
    return (check_number("bandwidth_bytes_per_s", bandwidth_bytes_per_s, min_value=0, allow_min=False),
            check_number("latency_s", latency_s, min_value=0))


def collective_time_s(kind, nbytes, n_ranks, link=None, *, bandwidth_bytes_per_s=None,
                      latency_s=0.0) -> float:
    """Alpha-beta time of a ring collective: steps * alpha + bytes_per_rank / beta.

    Give either a :class:`Link` or ``bandwidth_bytes_per_s`` (and optionally ``latency_s``).
    One rank (n = 1) communicates nothing and takes 0 s.
    """
    bw, alpha = _link_parameters(link, bandwidth_bytes_per_s, latency_s)
    steps = collective_steps(kind, n_ranks)
    return steps * alpha + collective_bytes_per_rank(kind, nbytes, n_ranks) / bw


# ----------------------------------------------------------------------------------------------
# The ring simulated on real arrays.

@dataclass(frozen=True)
class RingTrace:
    """What a simulated ring collective produced and what each link carried.

    ``link_bytes[r]`` is the total sent over the link from rank r to rank (r+1) mod n;
    ``step_bytes[s, r]`` the bytes rank r sent in step s. ``chunk_sizes`` in elements.
    """

    result: np.ndarray
    link_bytes: np.ndarray
    step_bytes: np.ndarray
    chunk_sizes: np.ndarray
    itemsize: int

    @property
    def n_steps(self) -> int:
        return int(self.step_bytes.shape[0])

    @property
    def total_bytes(self) -> float:
        return float(self.link_bytes.sum())


def ring_chunk_sizes(length, n_ranks) -> np.ndarray:
    """Elements in each of the n chunks a ring splits ``length`` into (as np.array_split does).

    The first ``length % n`` chunks hold one element more: 10 over 4 ranks is [3, 3, 2, 2].
    """
    length = check_int("length", length, min_value=0)
    n = check_int("n_ranks", n_ranks, min_value=1, max_value=1_000_000,
                  why="one chunk per rank is held in memory")
    sizes = np.full(n, length // n, dtype=np.int64)
    sizes[: length % n] += 1
    return sizes


def _check_data(data) -> np.ndarray:
    if isinstance(data, (str, bytes)) or data is None:
        raise TypeError(f"data must be a 2-D array (ranks x elements), got {type(data).__name__}")
    arr = np.asarray(data)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"data must hold integers or floats, got dtype {arr.dtype}")
    arr = check_array("data", arr, ndim=2, dtype=arr.dtype)
    if arr.shape[0] < 1:
        raise ValueError("data must have at least one rank (one row)")
    return arr


def _pack(arr: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """(ranks, length) -> (ranks, chunks, longest chunk), zero-padded."""
    n, _ = arr.shape
    width = int(sizes.max()) if sizes.size else 0
    buf = np.zeros((n, len(sizes), width), dtype=arr.dtype)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    for c, (start, size) in enumerate(zip(starts, sizes)):
        buf[:, c, :size] = arr[:, start:start + size]
    return buf


def _unpack(buf: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    return np.concatenate([buf[:, c, :size] for c, size in enumerate(sizes)], axis=1)


def _ring_pass(buf, sizes, itemsize, offset, reduce):
    """n-1 synchronous steps; in step s rank r sends chunk (r + offset - s) mod n to rank r+1.

    All ranks send at once: one fancy-indexed read and one write per step. The receiver adds
    the chunk to its own (reduce) or stores it (gather). Returns bytes sent, shape (n-1, n).
    """
    n = buf.shape[0]
    ranks = np.arange(n)
    right = (ranks + 1) % n
    step_bytes = np.zeros((max(n - 1, 0), n))
    for s in range(n - 1):
        chunk = (ranks + offset - s) % n
        outgoing = buf[ranks, chunk].copy()          # every rank sends at the same time
        if reduce:
            buf[right, chunk] += outgoing
        else:
            buf[right, chunk] = outgoing
        step_bytes[s] = sizes[chunk] * itemsize
    return step_bytes


def simulate_ring_reduce_scatter(data) -> RingTrace:
    """Ring reduce-scatter of ``data`` (ranks x elements): rank r ends with the sum of chunk r.

    ``result`` keeps the full (ranks x elements) buffers; the fully reduced chunk of rank r is
    ``result[r, chunk r]`` (the other entries hold partial sums, as on a real GPU).
    """
    arr = _check_data(data)
    n, length = arr.shape
    sizes = ring_chunk_sizes(length, n)
    buf = _pack(arr.copy(), sizes)
    step_bytes = _ring_pass(buf, sizes, arr.itemsize, offset=-1, reduce=True)
    return RingTrace(_unpack(buf, sizes), step_bytes.sum(axis=0), step_bytes, sizes, arr.itemsize)


def simulate_ring_all_gather(data) -> RingTrace:
    """Ring all-gather: rank r starts owning chunk r of its row; every rank ends with all chunks."""
    arr = _check_data(data)
    n, length = arr.shape
    sizes = ring_chunk_sizes(length, n)
    buf = _pack(arr.copy(), sizes)
    step_bytes = _ring_pass(buf, sizes, arr.itemsize, offset=0, reduce=False)
    return RingTrace(_unpack(buf, sizes), step_bytes.sum(axis=0), step_bytes, sizes, arr.itemsize)


def simulate_ring_all_reduce(data) -> RingTrace:
    """Ring all-reduce of ``data`` (ranks x elements): reduce-scatter, then all-gather.

    Every row of ``result`` equals ``data.sum(axis=0)`` (exactly, for integer data). The length
    need not divide by the number of ranks: chunks differ by at most one element.
    """
    arr = _check_data(data)
    n, length = arr.shape
    sizes = ring_chunk_sizes(length, n)
    buf = _pack(arr.copy(), sizes)
    rs = _ring_pass(buf, sizes, arr.itemsize, offset=-1, reduce=True)
    ag = _ring_pass(buf, sizes, arr.itemsize, offset=0, reduce=False)
    step_bytes = np.concatenate([rs, ag], axis=0)
    return RingTrace(_unpack(buf, sizes), step_bytes.sum(axis=0), step_bytes, sizes, arr.itemsize)


def ring_all_reduce_link_bytes(length, n_ranks, itemsize=4) -> np.ndarray:
    """Bytes over each link r -> r+1 in a ring all-reduce, from counting which chunks cross it.

    Reduce-scatter sends every chunk but chunk r over link r; all-gather every chunk but r+1:
        link_bytes[r] = itemsize * (2 L - c[r] - c[(r+1) mod n])
    With n dividing L this is 2(n-1)/n * S for S = L * itemsize.
    """
    sizes = ring_chunk_sizes(length, n_ranks)
    item = check_int("itemsize", itemsize, min_value=1)
    n = len(sizes)
    if n == 1:
        return np.zeros(1)
    return item * (2.0 * sizes.sum() - sizes - np.roll(sizes, -1))


def simulated_time_s(trace: RingTrace, link=None, *, bandwidth_bytes_per_s=None, latency_s=0.0) -> float:
    """Time of a traced ring run: every step waits for its slowest link, alpha + max bytes / beta."""
    if not isinstance(trace, RingTrace):
        raise TypeError(f"trace must be a RingTrace, got {type(trace).__name__}")
    bw, alpha = _link_parameters(link, bandwidth_bytes_per_s, latency_s)
    if trace.n_steps == 0:
        return 0.0
    return float(np.sum(alpha + trace.step_bytes.max(axis=1) / bw))



# ----------------------------------------------------------------------------------------------
# TPU pods: a torus of chips joined by ICI, and collectives on it

@dataclass(frozen=True)
class TpuPod:
    """One TPU generation's pod as Google's documentation states it (``data/tpu_pods.toml``)."""

    accelerator: str
    chips: int
    topology: str
    max_slice: tuple
    source: str
    ici_ports_per_chip: int | None = None
    allreduce_bytes_per_s: float | None = None        # Google's "all-reduce bandwidth per Pod"
    bisection_bytes_per_s: float | None = None
    optical_circuit_switches: bool = False


@functools.lru_cache(maxsize=1)
def _pods() -> dict:
    text = resources.files("course_lib").joinpath("data/tpu_pods.toml").read_bytes()
    pods = {}
    for e in tomllib.loads(text.decode("utf-8"))["pod"]:
        acc = get_accelerator(e["accelerator"])
        tb = lambda key: None if key not in e else float(e[key]) * 1e12      # noqa: E731
        pods[acc.name] = TpuPod(acc.name, int(e["chips"]), e["topology"], tuple(int(d) for d in e["max_slice"]),
                                e["source"], e.get("ici_ports_per_chip"), tb("allreduce_tb_per_s"),
                                tb("bisection_tb_per_s"), bool(e.get("optical_circuit_switches", False)))
    return pods


def tpu_pods() -> list[TpuPod]:
    """Every stored TPU pod, oldest generation first."""
    return list(_pods().values())


def get_tpu_pod(accelerator) -> TpuPod:
    acc = get_accelerator(accelerator)
    if acc.name not in _pods():
        raise ValueError(f"no TPU pod stored for {acc.name!r}; known: {', '.join(_pods())}")
    return _pods()[acc.name]


@dataclass(frozen=True)
class TorusAllReduce:
    """An all-reduce on a torus, one bidirectional ring per dimension (alpha-beta model)."""

    dims: tuple
    nbytes: float
    link_bytes_per_s: float          # one link, one direction
    latency_s: float
    concurrent_dims: bool
    steps: int                       # synchronous ring steps on the critical path
    bytes_per_chip: float            # bytes each chip sends in total
    time_s: float


def torus_all_reduce(nbytes, dims, link_bytes_per_s, latency_s=0.0, concurrent_dims=False) -> TorusAllReduce:
    """All-reduce ``nbytes`` on a torus of shape ``dims`` (e.g. (16, 16, 24)).

    Reduce-scatter along each dimension in turn, then all-gather back. Along a dimension of size
    d every chip runs a ring in both directions at once (two links, ``link_bytes_per_s`` each
    way), on the data left after the earlier dimensions: S, S/d1, S/(d1 d2), ... So

        bytes per chip = 2 S (1 - 1/p)                 (p = d1 d2 ..., the bandwidth-optimal bound)
        steps          = 2 sum(d_i - 1)                (a switched ring of p chips: 2(p - 1))
        time           = steps alpha + bytes per chip / (2 beta_link)

    ``concurrent_dims`` splits S into one part per dimension, each part visiting the dimensions in
    a rotated order, so all 2k links of a k-dimensional torus carry data at once: the bandwidth
    term divides by k (the latency term stays).
    """
    s = check_number("nbytes", nbytes, min_value=0)
    shape = tuple(check_int("dims", d, min_value=1, max_value=1_000_000)
                  for d in check_sequence("dims", dims, min_len=1, max_len=4, scalar_ok=False))
    if not shape or len(shape) > 4:
        raise ValueError(f"dims must hold one to four torus dimensions, got {dims!r}")
    beta = check_number("link_bytes_per_s", link_bytes_per_s, min_value=0, allow_min=False)
    alpha = check_number("latency_s", latency_s, min_value=0)
    if not isinstance(concurrent_dims, bool):
        raise TypeError(f"concurrent_dims must be True or False, got {concurrent_dims!r}")
    p = math.prod(shape)
    remaining, sent = s, 0.0
    for d in shape:
        sent += (d - 1) / d * remaining          # reduce-scatter along this dimension
        remaining /= d
    per_chip = 2 * sent                          # and the all-gather that mirrors it
    steps = 2 * sum(d - 1 for d in shape)
    links_busy = 2 * (len(shape) if concurrent_dims else 1)
    time = steps * alpha + per_chip / (links_busy * beta)
    assert math.isclose(per_chip, 2 * s * (1 - 1 / p), rel_tol=1e-9, abs_tol=1e-9)
    return TorusAllReduce(shape, s, beta, alpha, concurrent_dims, steps, per_chip, time)
