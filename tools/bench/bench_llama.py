#!/usr/bin/env python3
"""A Llama decode step: cudag (graphs/llama_decode.yaml, llama_generate.yaml)
against PyTorch, Hugging Face transformers and the weight-streaming floor.

One process, one GPU, one run that fits a 10-minute device call (compilation
included; --budget-s bounds it, and what would start after the budget is
skipped with a note).  For each model shape (--shapes: 1b = Llama-3.2-1B,
8b = Llama-3.1-8B dimensions, tied embedding for both) and batch (--batches):

  weights   random bf16 on the GPU, seeded, each matrix scaled by 1/sqrt(fan_in),
            norm weights near 1, in the layouts of /LLAMA_CONTRACT (wqkv = q, k,
            v rows; wgu = gate rows then up rows; embed doubles as the LM head)
  bound     the same tensors into cudag (through the Python package, -D vars
            for the shape, CTX sized for the largest KV length), into
            transformers' LlamaForCausalLM (its parameters become views of
            them) and into a plain PyTorch step written below
  checked   every implementation runs the same teacher-forced sequence: a
            prompt of --prompt tokens, then the greedy tokens of an f32
            reference (the plain step with every weight upcast and nothing
            rounded to bf16) for --gen steps; each reports the greedy token it
            would pick at every step after the prompt (equal to the f32 one
            at every step = the same 33 greedy tokens free-running), where it
            differs how near a tie the f32 logits were, and its final logits
            against the f32 reference (max abs, relative norm).  cudag with
            programmatic edges and with full edges must agree bit for bit;
            the device loop's tokens must equal N host-driven replays of the
            step from the same start
  timed     µs per step at each KV length (--lengths): cudag with programmatic
            edges and with full edges (CUDAG_NO_PDL), PyTorch eager, the eager
            step captured in a torch.cuda.CUDAGraph, torch.compile of the step,
            the compiled step captured, transformers eager (DynamicCache) and
            transformers with a StaticCache under torch.compile
            (mode="reduce-overhead"); the per-token time of the device loop
            (generate.yaml, one launch for --gen-tokens tokens), of N replays
            back to back, and of a host loop that reads the token back after
            every step; the floor: weight + KV bytes read per step over the
            bandwidth of a 1 GiB device-to-device copy (read + write) measured
            in the same run

Timing is bench_mlp_torch.py's: CUDA events on the stream, warm-up first,
medians.  Each timed call is preceded, outside its events, by the write that
puts the position back at the KV length (pos.fill_ for cudag and the plain
step, the cache length for transformers), so every call of a variant runs at
exactly that length.  The plain step and transformers' StaticCache attend over
a fixed window (the plain step: the KV length rounded up to 64; the
StaticCache: its whole capacity, as transformers does); transformers eager
attends over exactly the cached tokens but copies its DynamicCache every step
(torch.cat), as it does in generate().

Prints a markdown table (device, date) and writes JSON (--json, after every
configuration, so a run cut short keeps what it measured) and the table
(--markdown).

    PYTHONPATH=python CUDAG_LIBRARY=build/src/libcudag.so \\
        CUDAG_KERNELS_DIR=build/kernels python3 tools/bench/bench_llama.py \\
        [--quick] [--shapes 1b,8b] [--batches 1,8] [--lengths 128,1024,8192] \\
        [--compile plain,hf] [--budget-s 520] [--json F] [--markdown F]
    python3 tools/bench/bench_llama.py --self-test     # CPU checks, no GPU

The plain step's semantics are the contract's (HF LlamaForCausalLM, greedy,
bf16 activations, f32 softmax and norms); --self-test checks it against a
NumPy reference and, where transformers is importable, against
LlamaForCausalLM on the CPU.
"""
import argparse
import datetime
import gc
import json
import math
import os
import statistics
import sys
import time
import traceback
import warnings
from collections import namedtuple
from types import SimpleNamespace

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# RF: the llama3 RoPE scaling factor, Llama-3.2-1B's 32 and Llama-3.1-8B's 8
# (given to the graphs as -D ROPE_FACTOR).
SHAPES = {
    "1b": dict(L=16, H=2048, F=8192, NH=32, NKV=8, HD=64, V=128256, RF=32),
    "8b": dict(L=32, H=4096, F=14336, NH=32, NKV=8, HD=128, V=128256, RF=8),
    # For --self-test and a smoke run on any GPU (not a Llama).
    "tiny": dict(L=2, H=256, F=512, NH=4, NKV=2, HD=64, V=1000, RF=32),
}
EPS = 1e-5
ROPE = dict(theta=500000.0, low=1.0, high=4.0, orig=8192)


def float_vars(d):
    """The graph variables that must hold these values (contract)."""
    return {"EPS": EPS, "THETA": ROPE["theta"], "ROPE_FACTOR": d.RF,
            "ROPE_LOW": ROPE["low"], "ROPE_HIGH": ROPE["high"],
            "ROPE_ORIG": ROPE["orig"]}
# Every buffer a program binds (contract); generate.yaml adds `out`.
WEIGHTS = ("embed", "attn_norm", "wqkv", "wo", "mlp_norm", "wgu", "wd",
           "final_norm")
TORCH_VARIANTS = ("torch_eager", "torch_graph", "torch_compile",
                  "torch_compile_graph", "hf_eager", "hf_compile")
LABELS = {"cudag": "cudag", "cudag_full": "cudag, full edges",
          "torch_eager": "eager", "torch_graph": "CUDA graph",
          "torch_compile": "compile", "torch_compile_graph": "compile + graph",
          "hf_eager": "HF eager", "hf_compile": "HF static + compile",
          "f32": "f32 reference"}


def log(*a):
    print("[bench_llama %6.1fs]" % (time.monotonic() - T0), *a, file=sys.stderr,
          flush=True)


T0 = time.monotonic()
# Where everything runs: "cuda", or "cpu" for a smoke run of the harness on
# the tiny shape (--device cpu: host clock, no CUDA graphs, no cudag).
DEV = "cuda"


def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()


def empty_cache():
    if DEV == "cuda":
        torch.cuda.empty_cache()


Dims = namedtuple("Dims", "name L H F NH NKV HD V RF QKV G")


def dims(shape):
    """A shape's dimensions (a named tuple: torch.compile reads it as
    constants)."""
    s = SHAPES[shape]
    return Dims(shape, QKV=(s["NH"] + 2 * s["NKV"]) * s["HD"],
                G=s["NH"] // s["NKV"], **s)


def round_up(n, k):
    return (n + k - 1) // k * k


# ---- weights --------------------------------------------------------------

def weight_shapes(d):
    """Each weight buffer's tensor shape (row-major [out][in] per layer)."""
    return {"embed": (d.V, d.H), "attn_norm": (d.L, d.H),
            "wqkv": (d.L, d.QKV, d.H), "wo": (d.L, d.H, d.NH * d.HD),
            "mlp_norm": (d.L, d.H), "wgu": (d.L, 2 * d.F, d.H),
            "wd": (d.L, d.H, d.F), "final_norm": (d.H,)}


def weight_bytes(d):
    n = 0
    for s in weight_shapes(d).values():
        n += math.prod(s)
    return 2 * n


def make_weights(d, device, seed=1):
    """Random bf16 weights: normal, scaled 1/sqrt(fan_in); norms 1 + N(0, 0.05).
    Filled layer by layer so the f32 temporaries stay small (8B: 16 GB of
    weights)."""
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    w = {}
    for name, shape in weight_shapes(d).items():
        t = torch.empty(shape, dtype=torch.bfloat16, device=device)
        if name.endswith("norm"):
            t.copy_(1 + 0.05 * torch.randn(shape, generator=g, device=device))
        else:
            fan_in = shape[-1]
            parts = t if t.dim() == 3 else t.unsqueeze(0)
            for p in parts:
                p.copy_(torch.randn(p.shape, generator=g, device=device)
                        .mul_(1 / math.sqrt(fan_in)))
        w[name] = t
    return w


def checksum(w):
    """A few sums that say two builds made the same weights."""
    return [float(w[n].float().sum()) for n in ("embed", "wqkv", "wd")]


# ---- the plain PyTorch step -------------------------------------------------

def llama3_inv_freq(d, device="cpu"):
    """transformers' _compute_llama3_parameters, in f32 on the CPU."""
    HD, factor = d.HD, float(d.RF)
    inv = 1.0 / (ROPE["theta"] ** (torch.arange(0, HD, 2, dtype=torch.int64)
                                   .to(torch.float) / HD))
    low_wl = ROPE["orig"] / ROPE["low"]
    high_wl = ROPE["orig"] / ROPE["high"]
    wavelen = 2 * math.pi / inv
    inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
    smooth = (ROPE["orig"] / wavelen - ROPE["low"]) / (ROPE["high"] - ROPE["low"])
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
    return torch.where(medium, smoothed, inv_l).to(device)


def rms_norm(x, weight):
    """LlamaRMSNorm: in f32, back to x's type, times the weight."""
    dt = x.dtype
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    return weight * xf.to(dt)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def plain_step(d, w, inv_freq, kc, vc, tok, pos, logits, W, f32=False):
    """One decode step of the contract, as a PyTorch user writes it.

    kc, vc: [L][B][NKV][C][HD] caches (C >= W); tok: [B] integer tokens,
    overwritten with the greedy next token; pos: [1] int32, the position this
    step writes (= tokens in the cache), incremented; logits: [B][V] out.
    W (an int, or the size of a tensor for torch.compile's dynamic shapes):
    the attention window, W > pos; positions past pos are masked.  f32=True
    upcasts every weight and keeps every activation in f32 (the reference).
    Everything stays on the device: the step can be captured as a graph."""
    cast = (lambda t: t.float()) if f32 else (lambda t: t)
    dt = torch.float32 if f32 else torch.bfloat16
    B = tok.shape[0]
    nq, nk = d.NH * d.HD, d.NKV * d.HD
    p = pos.long()
    x = cast(w["embed"][tok.long()])                       # [B, H]
    freqs = p.float()[:, None] * inv_freq[None, :]         # [1, HD/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(dt), emb.sin().to(dt)          # [1, HD]
    keep = torch.arange(W, device=tok.device) <= p         # [W]
    scale = d.HD ** -0.5
    for l in range(d.L):
        h = rms_norm(x, cast(w["attn_norm"][l]))
        qkv = F.linear(h, cast(w["wqkv"][l]))
        q = qkv[:, :nq].view(B, d.NH, d.HD)
        k = qkv[:, nq:nq + nk].view(B, d.NKV, d.HD)
        v = qkv[:, nq + nk:].view(B, d.NKV, d.HD)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        kc[l].index_copy_(2, p, k.unsqueeze(2).to(kc[l].dtype))
        vc[l].index_copy_(2, p, v.unsqueeze(2).to(vc[l].dtype))
        kw, vw = kc[l][:, :, :W], vc[l][:, :, :W]          # [B, NKV, W, HD]
        qg = q.view(B, d.NKV, d.G, d.HD)
        s = torch.matmul(qg, kw.transpose(-1, -2)) * scale  # [B, NKV, G, W]
        s = s.float().masked_fill(~keep, float("-inf"))
        a = torch.softmax(s, dim=-1).to(dt)
        o = torch.matmul(a, vw).reshape(B, nq)
        x = x + F.linear(o, cast(w["wo"][l]))
        h = rms_norm(x, cast(w["mlp_norm"][l]))
        gu = F.linear(h, cast(w["wgu"][l]))
        x = x + F.linear(F.silu(gu[:, :d.F]) * gu[:, d.F:], cast(w["wd"][l]))
    lg = F.linear(rms_norm(x, cast(w["final_norm"])), cast(w["embed"]))
    logits.copy_(lg)
    tok.copy_(torch.argmax(lg, dim=-1))
    pos.add_(1)


# ---- timing ----------------------------------------------------------------

def timed(fn, iters, warm, before=None):
    """µs per call of fn: CUDA events around each call, `before` (outside the
    events) ahead of each; median, min and max."""
    for _ in range(warm):
        if before:
            before()
        fn()
    sync()
    if DEV != "cuda":
        t = []
        for _ in range(iters):
            if before:
                before()
            t0 = time.perf_counter()
            fn()
            t.append((time.perf_counter() - t0) * 1e6)
        return {"median": statistics.median(t), "min": min(t), "max": max(t),
                "n": iters}
    ev = [(torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for s, e in ev:
        if before:
            before()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    t = [s.elapsed_time(e) * 1e3 for s, e in ev]
    return {"median": statistics.median(t), "min": min(t), "max": max(t),
            "n": iters}


def copy_bandwidth():
    """Bytes read plus written per second by a 1 GiB device-to-device copy."""
    n = 1 << (29 if DEV == "cuda" else 24)     # bf16 elements: 1 GiB
    a = torch.empty(n, dtype=torch.bfloat16, device=DEV)
    b = torch.empty_like(a)
    us = timed(lambda: b.copy_(a), 20, 5)["median"]
    del a, b
    empty_cache()
    return 2 * n * 2 / (us * 1e-6)


# ---- cudag -------------------------------------------------------------------

def import_cudag(build):
    """The Python package from this checkout and a build tree, unless the
    environment already names them."""
    if build:
        lib = os.path.join(build, "src", "libcudag.so")
        os.environ.setdefault("CUDAG_LIBRARY", lib)
        os.environ.setdefault("CUDAG_KERNELS_DIR", os.path.join(build, "kernels"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import cudag
    return cudag


class Cudag:
    """The decode and generate graphs with the program's tensors bound, each
    instantiated on the program's stream: `dec` with programmatic edges
    (strict: an edge that cannot be programmatic is an error), `dec_full`
    with every edge full (no_pdl), `gen` the device loop."""

    def __init__(self, cudag, a, d, B, ctx, w, kc, vc, tok, pos, logits, out,
                 stream, info):
        self.cudag, self.d = cudag, d
        # SMS: the grids of two blocks a SM (the attention's, gate/up's) fit
        # this GPU's SMs, as a user on another GPU than the graphs' 132 would
        # pass them.
        defines = dict(L=d.L, H=d.H, F=d.F, NH=d.NH, NKV=d.NKV, HD=d.HD,
                       V=d.V, CTX=ctx, B=B, ROPE_FACTOR=d.RF,
                       SMS=torch.cuda.get_device_properties(
                           torch.cuda.current_device()).multi_processor_count)
        defines.update(a.define)
        bind = dict(w)
        bind.update(kcache=kc, vcache=vc, tok=tok, pos=pos, logits=logits)
        self.graphs, self.execs = [], []
        dec = self._load(a.decode_graph, defines, info, "decode")
        self._check(dec, defines, bind, info, "decode")
        self.dec = self._instantiate(dec, stream, bind, info, "decode")
        # The same graph with every edge built full (CUDAG_NO_PDL): the A/B
        # the library promises gives identical results, bit for bit.
        self.dec_full = dec.instantiate(stream=stream, no_pdl=True)
        self.execs.append(self.dec_full)
        if not info["decode"]["programmatic_built"]:
            info["decode"]["note"] = ("no edge was built programmatic: the PDL "
                                      "and full-edge graphs are the same")
        self.gen = None
        if a.generate_graph:
            # EOS keeps its default (-1: none), so N tokens are always made.
            gdef = dict(defines, N=a.gen_tokens)
            gdef.update(a.gen_define)
            gen = self._load(a.generate_graph, gdef, info, "generate")
            gbind = dict(bind, out=out)
            self._check(gen, gdef, gbind, info, "generate")
            self.gen = self._instantiate(gen, stream, gbind, info, "generate")

    def _load(self, path, defines, info, key):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            g = self.cudag.load(path, defines=defines)
        self.graphs.append(g)
        p = g.plan()
        info[key] = {"file": path, "nodes": p.nodes,
                     "kernel_nodes": p.kernel_nodes, "edges_declared": p.edges,
                     "depth": p.depth, "conditional_nodes": p.conditional_nodes,
                     "warnings": [str(x.message) for x in ws]}
        return g

    def _check(self, g, defines, bind, info, key):
        """Every variable and bound buffer as the contract says, or a
        sentence naming the first that is not."""
        v = g.vars
        for k, want in defines.items():
            if k in v and v[k] != want:
                raise RuntimeError(f"{key} graph: variable {k} is {v[k]} after "
                                   f"the defines, expected {want}")
        fv = float_vars(self.d)
        off = {k: v[k] for k, want in fv.items()
               if k in v and abs(v[k] - want) > 1e-9 * max(1, abs(want))}
        if off:
            raise RuntimeError(f"{key} graph: variables {off} differ from the "
                               f"model's {fv}")
        # A constant of the graph (the step's RMSNorm epsilon, say) is not
        # a variable: listed, not checked.
        info[key]["vars_missing"] = sorted(k for k in fv if k not in v)
        bufs = g.buffers
        for name, t in bind.items():
            b = bufs.get(name)
            if b is None:
                raise RuntimeError(f"{key} graph has no buffer '{name}' (it has "
                                   f"{', '.join(sorted(bufs))})")
            if b.count != t.numel():
                raise RuntimeError(f"{key} graph: buffer '{name}' holds "
                                   f"{b.count} elements, the contract's layout "
                                   f"{tuple(t.shape)} = {t.numel()}")

    def _instantiate(self, g, stream, bind, info, key):
        try:
            x = g.instantiate(stream=stream, bind=bind, strict=True)
        except self.cudag.Error as e:
            if e.status != "CUDAG_EPDL":
                raise
            # Measure anyway, and say which edges the device refused.
            info[key]["strict_error"] = str(e)
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                x = g.instantiate(stream=stream, bind=bind)
            info[key]["warnings"] += [str(m.message) for m in ws]
        self.execs.append(x)
        st = x.stats
        info[key]["downgraded_edges"] = st["downgraded_edges"]
        info[key]["instantiate_ms"] = sum(
            st[k] for k in ("load_ns", "alloc_ns", "build_ns",
                            "instantiate_ns")) / 1e6
        e = info[key]["edges_declared"]
        info[key]["programmatic_built"] = (e.get("programmatic", 0) +
                                          e.get("launch_order", 0) -
                                          st["downgraded_edges"])
        return x

    def close(self):
        for x in self.execs:
            x.close()
        for g in self.graphs:
            g.close()


# ---- transformers ------------------------------------------------------------

class HF:
    """transformers' LlamaForCausalLM with our tensors as its parameters."""

    def __init__(self, d, w, device, dtype=torch.bfloat16):
        import inspect
        import transformers
        from transformers import LlamaConfig, LlamaForCausalLM
        self.version = transformers.__version__
        kw = dict(vocab_size=d.V, hidden_size=d.H, intermediate_size=d.F,
                  num_hidden_layers=d.L, num_attention_heads=d.NH,
                  num_key_value_heads=d.NKV, head_dim=d.HD,
                  max_position_embeddings=131072, rms_norm_eps=EPS,
                  tie_word_embeddings=True, attention_bias=False,
                  mlp_bias=False, hidden_act="silu", bos_token_id=None,
                  eos_token_id=None, pad_token_id=None)
        rope = {"rope_type": "llama3", "rope_theta": ROPE["theta"],
                "factor": float(d.RF), "low_freq_factor": ROPE["low"],
                "high_freq_factor": ROPE["high"],
                "original_max_position_embeddings": ROPE["orig"]}
        try:
            cfg = LlamaConfig(**kw, rope_parameters=rope)
        except TypeError:           # transformers 4.x
            cfg = LlamaConfig(**kw, rope_theta=ROPE["theta"],
                              rope_scaling={k: v for k, v in rope.items()
                                            if k != "rope_theta"})
        with torch.device(device):
            try:
                m = LlamaForCausalLM._from_config(cfg, dtype=dtype,
                                                  attn_implementation="sdpa")
            except TypeError:
                m = LlamaForCausalLM._from_config(cfg, torch_dtype=dtype,
                                                  attn_implementation="sdpa")
        m.eval()
        nq, nk = d.NH * d.HD, d.NKV * d.HD

        def put(mod, t):
            mod.weight = torch.nn.Parameter(t, requires_grad=False)
        put(m.model.embed_tokens, w["embed"])
        m.lm_head.weight = m.model.embed_tokens.weight
        put(m.model.norm, w["final_norm"])
        for l, lay in enumerate(m.model.layers):
            a, mlp = lay.self_attn, lay.mlp
            put(a.q_proj, w["wqkv"][l, :nq])
            put(a.k_proj, w["wqkv"][l, nq:nq + nk])
            put(a.v_proj, w["wqkv"][l, nq + nk:])
            put(a.o_proj, w["wo"][l])
            put(mlp.gate_proj, w["wgu"][l, :d.F])
            put(mlp.up_proj, w["wgu"][l, d.F:])
            put(mlp.down_proj, w["wd"][l])
            put(lay.input_layernorm, w["attn_norm"][l])
            put(lay.post_attention_layernorm, w["mlp_norm"][l])
        # What it claims: our memory (no copy), our RoPE, no other weights.
        for n, p in m.named_parameters():
            if p.dtype != dtype or p.device.type != torch.device(device).type:
                raise RuntimeError(f"HF parameter {n} is {p.dtype} on {p.device}")
        if m.lm_head.weight.data_ptr() != w["embed"].data_ptr():
            raise RuntimeError("HF lm_head is not tied to embed")
        if m.model.layers[-1].mlp.down_proj.weight.data_ptr() != \
                w["wd"][d.L - 1].data_ptr():
            raise RuntimeError("HF parameters are not views of the weights")
        rot = m.model.rotary_emb
        ours = llama3_inv_freq(d)
        theirs = rot.inv_freq.float().cpu()
        if getattr(rot, "attention_scaling", 1.0) != 1.0 or \
                not torch.allclose(theirs, ours, rtol=1e-5, atol=0):
            raise RuntimeError(
                "HF's RoPE is not the contract's llama3 RoPE: inv_freq max "
                f"rel diff {float(((theirs - ours) / ours).abs().max()):.2e}, "
                f"attention_scaling {getattr(rot, 'attention_scaling', None)}")
        self.m, self.cfg, self.d, self.dtype = m, cfg, d, dtype
        params = inspect.signature(m.forward).parameters
        # transformers 5.24 renamed past_key_values to cache.
        self.cache_kw = "cache" if "cache" in params else "past_key_values"
        self.takes_cache_position = "cache_position" in params

    def dynamic_cache(self):
        from transformers import DynamicCache
        try:
            return DynamicCache(config=self.cfg)
        except TypeError:
            return DynamicCache()

    def fill_dynamic(self, cache, B, n, gen):
        """n random tokens of keys and values in every layer."""
        d = self.d
        for l in range(d.L):
            k = torch.randn(B, d.NKV, n, d.HD, generator=gen, device=gen.device,
                            dtype=self.dtype)
            cache.update(k, torch.randn_like(k), l)

    @staticmethod
    def set_dynamic_len(cache, n):
        """Truncates a DynamicCache to n tokens (views: the next update
        concatenates, as in generate())."""
        for lay in cache.layers:
            lay.keys = lay.keys[..., :n, :]
            lay.values = lay.values[..., :n, :]
            if isinstance(getattr(lay, "cumulative_length", None), int):
                lay.cumulative_length = n

    def static_cache(self, B, n, device):
        """A StaticCache of n positions, allocated now (not in the first,
        compiled, call)."""
        from transformers import StaticCache
        c = StaticCache(config=self.cfg, max_cache_len=n)
        c.early_initialization(B, self.d.NKV, self.d.HD, self.dtype,
                               torch.device(device))
        return c

    @staticmethod
    def set_static_len(cache, n):
        """The position the next token is written at (and masked from), for
        transformers whose StaticLayer counts it on the device."""
        for lay in cache.layers:
            cl = getattr(lay, "cumulative_length", None)
            if not isinstance(cl, torch.Tensor):
                raise RuntimeError("this transformers' StaticLayer has no "
                                   "cumulative_length tensor: pass "
                                   "cache_position instead (not written)")
            cl.fill_(n)

    def args(self, ids, position, cache):
        """forward() arguments for one token per sequence at `position`."""
        B = ids.shape[0]
        kw = {"input_ids": ids.reshape(B, 1).long(),
              "position_ids": position.view(1, 1).long().expand(B, 1)
              .contiguous(),
              "use_cache": True, self.cache_kw: cache}
        if self.takes_cache_position:
            kw["cache_position"] = position.view(1).long()
        return kw


# ---- correctness -------------------------------------------------------------

def forced_run(step, S, T):
    """Runs `step(ids)` for t < T with S[:, t] as the input tokens; step
    returns (its greedy tokens [B], its logits [B, V]).  Every step's greedy
    tokens and the final logits (f32), on the host."""
    toks = []
    lg = None
    for t in range(T):
        tk, lg = step(S[:, t])
        toks.append(tk.long().cpu())
    return torch.stack(toks, 1), lg.float().cpu()


def compare(name, got, last, ref, P, res):
    """One implementation against the f32 reference: the greedy tokens after
    the prompt (steps P-1 .. T-1) and, where they differ, the f32 logits of
    both tokens (how near a tie it was); the final logits' max abs difference
    and relative norm."""
    g, r = got[:, P - 1:], ref.toks[:, P - 1:]
    mism = []
    for b, t in (g != r).nonzero().tolist():
        step = P - 1 + t
        fl = ref.steps[b, step]
        mism.append({"batch": b, "step": step, "token": int(g[b, t]),
                     "f32_token": int(r[b, t]),
                     "f32_logit_of_token": float(fl[g[b, t]]),
                     "f32_logit_of_f32_token": float(fl[r[b, t]])})
    diff = last - ref.last
    res[name] = {"tokens": int(g.numel()), "tokens_equal": int((g == r).sum()),
                 "first_mismatch_step": min((m["step"] for m in mism),
                                            default=None),
                 "mismatches": mism[:8],
                 "final_logits_max_abs": float(diff.abs().max()),
                 "final_logits_rel_norm": float(diff.norm() / ref.last.norm())}
    return res[name]


# ---- one configuration -------------------------------------------------------

class Config:
    """Everything for one (shape, batch): the tensors, the implementations
    bound to them, and its row of results."""

    def __init__(self, a, shape, B, bw, row=None):
        self.a, self.B, self.bw = a, B, bw
        self.d = d = dims(shape)
        self.row = row if row is not None else {
            "shape": shape, "B": B, "dims": dict(SHAPES[shape]),
            "weight_bytes": weight_bytes(d), "lengths": [], "correctness": {},
            "errors": {}, "notes": [], "compile_s": {}, "skipped": []}
        self.lengths = a.lengths
        self.P, self.T = a.prompt, a.prompt + a.gen
        need = max(max(self.lengths) + 1, self.lengths[0] + a.gen_tokens + 1,
                   self.T + 1)
        self.ctx = a.ctx or round_up(need + 64, 256)
        self.row["ctx"] = self.ctx
        # The plain step's attention window at each length, and for the
        # checked sequence.
        self.wwin = {n: round_up(n + 1, 64) for n in self.lengths}
        self.wcheck = round_up(self.T + 1, 64)
        self.w = make_weights(d, DEV, a.seed)
        sums = checksum(self.w)
        if self.row.setdefault("weights_checksum", sums) != sums:
            raise RuntimeError("the weights differ from the first pass's")
        self.inv_freq = llama3_inv_freq(d, DEV)
        cs = (d.L, B, d.NKV, self.ctx, d.HD)
        self.kc = torch.zeros(cs, dtype=torch.bfloat16, device=DEV)
        self.vc = torch.zeros_like(self.kc)
        self.tok = torch.zeros(B, dtype=torch.int32, device=DEV)
        self.pos = torch.zeros(1, dtype=torch.int32, device=DEV)
        self.logits = torch.zeros(B * d.V, dtype=torch.bfloat16, device=DEV)
        self.lg = self.logits.view(B, d.V)
        self.out = torch.zeros(B * a.gen_tokens, dtype=torch.int32,
                               device=DEV)
        g = torch.Generator(device="cpu")
        g.manual_seed(a.seed + 7)
        self.prompt = torch.randint(0, d.V, (B, self.P), generator=g)
        self.cg = None          # Cudag
        self.hf = None          # HF
        self.ref = None         # the f32 reference's run
        self.runs = {}          # name -> (tokens, final logits) of each check
        self.graphs = []        # captured torch.cuda.CUDAGraphs alive

    def tag(self):
        return f"{self.d.name} B={self.B}"

    def attempt(self, key, fn):
        """fn(), its failure recorded under `key` instead of ending the run
        (unless the CUDA context is lost: then the run stops)."""
        try:
            return fn()
        except Exception as e:      # noqa: BLE001 - recorded and reported
            msg = f"{type(e).__name__}: {e}"
            self.row["errors"][key] = msg[:2000]
            log(f"{self.tag()} {key} FAILED: {msg[:500]}")
            traceback.print_exc(file=sys.stderr)
            check_context()
            return None

    def step_plain(self, W, kc=None, vc=None):
        """The plain step at window W on the shared buffers, as a callable."""
        kc = self.kc if kc is None else kc
        vc = self.vc if vc is None else vc
        return lambda: plain_step(self.d, self.w, self.inv_freq, kc, vc,
                                  self.tok, self.pos, self.lg, W)

    def capture(self, fn):
        """fn captured in a torch.cuda.CUDAGraph (two warm-up calls on a side
        stream first, as PyTorch asks); returns its replay.  What the warm-up
        changed (pos, caches, tok) is the caller's to reset."""
        if DEV != "cuda":
            raise RuntimeError("no CUDA graphs on the CPU")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        p0 = int(self.pos.item())
        with torch.cuda.graph(g):
            fn()
        # A capture records without running: pos must not have moved.
        if int(self.pos.item()) != p0:
            raise RuntimeError("the capture ran the step instead of recording it")
        self.graphs.append(g)
        return g.replay

    def reset_state(self):
        self.kc.zero_()
        self.vc.zero_()
        self.pos.zero_()

    # -- correctness ---------------------------------------------------------

    def reference(self):
        """The f32 reference, free-running after the prompt; its inputs are
        the sequence S every other implementation is forced along."""
        d, B, P, T = self.d, self.B, self.P, self.T
        kf = torch.zeros((d.L, B, d.NKV, self.wcheck, d.HD),
                         dtype=torch.float32, device=DEV)
        vf = torch.zeros_like(kf)
        lgf = torch.zeros(B, d.V, dtype=torch.float32, device=DEV)
        self.pos.zero_()
        steps, toks = [], []
        for t in range(T):
            if t < P:
                self.tok.copy_(self.prompt[:, t])
            plain_step(d, self.w, self.inv_freq, kf, vf, self.tok, self.pos,
                       lgf, self.wcheck, f32=True)
            steps.append(lgf.cpu())
            toks.append(self.tok.long().cpu())
        del kf, vf, lgf
        steps = torch.stack(steps, 1)                 # [B, T, V], host
        self.ref = SimpleNamespace(steps=steps, toks=torch.stack(toks, 1),
                                   last=steps[:, -1])
        self.S = torch.cat([self.prompt, self.ref.toks[:, P - 1:T - 1]], 1)
        self.S_dev = self.S.to(DEV)
        corr = self.row["correctness"]
        corr.update(prompt=P, greedy_steps=self.a.gen,
                    compared_tokens_per_sequence=self.a.gen + 1)
        top2 = steps[:, P - 1:].topk(2, dim=-1).values
        corr["f32_min_top2_gap"] = float((top2[..., 0] - top2[..., 1]).min())
        corr["f32_tokens"] = self.ref.toks[:, P - 1:].tolist()
        log(f"{self.tag()}: f32 reference done")

    def check(self, name, run):
        """Records an implementation's forced run against the reference."""
        got, last = run
        self.runs[name] = (got, last)
        r = compare(name, got, last, self.ref, self.P, self.row["correctness"])
        log(f"  {name}: {r['tokens_equal']}/{r['tokens']} greedy tokens as f32, "
            f"final logits rel {r['final_logits_rel_norm']:.2e}")

    def plain_forced(self, step):
        """The plain step (or its graph) forced along S from an empty cache."""
        self.reset_state()

        def one(ids):
            self.tok.copy_(ids)
            step()
            return self.tok, self.lg
        return forced_run(one, self.S_dev, self.T)

    def correctness(self):
        self.attempt("correct:torch_eager", lambda: self.check(
            "torch_eager", self.plain_forced(self.step_plain(self.wcheck))))
        self.attempt("correct:torch_graph", lambda: self.check(
            "torch_graph",
            self.plain_forced(self.capture(self.step_plain(self.wcheck)))))
        self.graphs.clear()
        if self.hf is not None:
            self.attempt("correct:hf_eager",
                         lambda: self.check("hf_eager", self.hf_eager_forced()))
        if self.cg is not None:
            self.attempt("correct:cudag", self.cudag_correct)
        self.pairwise()

    def pairwise(self):
        """cudag against each other implementation directly."""
        corr = self.row["correctness"]
        if "cudag" not in self.runs:
            return
        tc, lc = self.runs["cudag"]
        P = self.P
        for k, (t, l) in self.runs.items():
            if k == "cudag":
                continue
            corr.setdefault("cudag_vs", {})[k] = {
                "tokens_equal": int((t[:, P - 1:] == tc[:, P - 1:]).sum()),
                "final_logits_max_abs": float((l - lc).abs().max()),
                "final_logits_rel_norm": float((l - lc).norm() / lc.norm())}

    def hf_eager_forced(self):
        hf = self.hf
        cache = hf.dynamic_cache()
        pos = torch.zeros(1, dtype=torch.long, device=DEV)
        t = [0]

        def one(ids):
            pos.fill_(t[0])
            t[0] += 1
            lg = hf.m(**hf.args(ids, pos, cache)).logits[:, -1]
            return torch.argmax(lg, dim=-1), lg
        r = forced_run(one, self.S_dev, self.T)
        if cache.get_seq_length() != self.T:
            raise RuntimeError(f"HF DynamicCache holds {cache.get_seq_length()} "
                               f"tokens after {self.T} steps")
        return r

    def cudag_correct(self):
        B, P, T = self.B, self.P, self.T
        corr = self.row["correctness"]
        for name, x in (("cudag", self.cg.dec), ("cudag_full", self.cg.dec_full)):
            self.reset_state()
            own = []

            def one(ids, x=x):
                self.tok.copy_(ids)
                x.launch()
                # cudag's own argmax against torch's over its logits.
                own.append(bool(torch.equal(self.tok.long(),
                                            torch.argmax(self.lg, dim=-1))))
                return self.tok, self.lg
            self.check(name, forced_run(one, self.S_dev, T))
            corr[f"{name}_argmax_equals_torch_argmax_steps"] = sum(own)
            p = int(self.pos.item())
            if p != T:
                raise RuntimeError(f"{name}: pos is {p} after {T} steps from 0 "
                                   "(the step must add 1)")
        a, b = self.runs["cudag"], self.runs["cudag_full"]
        corr["pdl_equals_full_bitwise"] = bool(torch.equal(a[0], b[0]) and
                                               torch.equal(a[1], b[1]))
        if self.cg.gen is None:
            return
        # The device loop against N host-driven replays of the step from the
        # same start: after the prompt, on the cache the forced run left.
        N = self.a.gen_tokens
        start = self.S_dev[:, P - 1].to(torch.int32)
        self.pos.fill_(P - 1)
        self.tok.copy_(start)
        reps = []
        for _ in range(N):
            self.cg.dec.launch()
            reps.append(self.tok.clone())
        reps = torch.stack(reps, 1).cpu()
        self.out.fill_(-7)
        self.pos.fill_(P - 1)
        self.tok.copy_(start)
        self.cg.gen.launch()
        out = self.out.view(B, N).cpu()
        same = bool(torch.equal(out, reps))
        corr["device_loop_equals_step_replays"] = same
        corr["device_loop_pos_after"] = int(self.pos.item())
        corr["device_loop_pos_expected"] = P - 1 + N
        if not same:
            m = (out != reps).nonzero().tolist()[0]
            corr["device_loop_first_mismatch"] = {
                "batch": m[0], "token": m[1], "out": int(out[m[0], m[1]]),
                "replay": int(reps[m[0], m[1]]),
                "out_shifted_by_one_matches": bool(
                    torch.equal(out[:, 1:], reps[:, :-1]))}
        log(f"  device loop equals {N} replays: {same}; pos "
            f"{corr['device_loop_pos_after']} (expected {P - 1 + N})")

    # -- timing ------------------------------------------------------------------

    def length_row(self, n):
        for r in self.row["lengths"]:
            if r["kv_len"] == n:
                return r
        d, B = self.d, self.B
        kv = 2 * d.L * B * d.NKV * (n + 1) * d.HD * 2
        r = {"kv_len": n, "kv_bytes": kv,
             "floor_us": (self.row["weight_bytes"] + kv) / self.bw * 1e6,
             "us": {}, "spread": {}}
        self.row["lengths"].append(r)
        self.row["lengths"].sort(key=lambda x: x["kv_len"])
        return r

    def put(self, n, key, t):
        r = self.length_row(n)
        r["us"][key] = t["median"]
        r["spread"][key] = [t["min"], t["max"], t["n"]]

    def at(self, n):
        return lambda: self.pos.fill_(n)

    def expect_pos(self, what, want):
        p = int(self.pos.item())
        if p != want:
            raise RuntimeError(f"{what}: pos is {p}, expected {want} (the "
                               "replay did not run the step)")

    def time_cudag(self):
        a = self.a
        for n in self.lengths:
            for key, x in (("cudag", self.cg.dec), ("cudag_full", self.cg.dec_full)):
                t = timed(x.launch, a.iters, a.warm, self.at(n))
                self.expect_pos(key, n + 1)
                self.put(n, key, t)
            u = self.length_row(n)["us"]
            log(f"  cudag at {n}: {u['cudag']:.1f} µs, full edges "
                f"{u['cudag_full']:.1f}")

    def time_loops(self):
        """From the first length: the device loop, N replays back to back,
        and a host loop that reads the tokens back after each step; µs per
        token."""
        a, B = self.a, self.B
        n0, N = self.lengths[0], a.gen_tokens
        start = torch.arange(1, B + 1, dtype=torch.int32, device=DEV) * 7

        def reset():
            self.pos.fill_(n0)
            self.tok.copy_(start)
        lp = {"start_kv_len": n0, "tokens": N}
        self.row["loop"] = lp
        host_toks = []

        def host_loop():
            host_toks.clear()
            for _ in range(N):
                self.cg.dec.launch()
                host_toks.append(self.tok.cpu())
        lp["host_loop_us_per_token"] = timed(host_loop, a.loop_reps, 1,
                                             reset)["median"] / N
        self.expect_pos("host loop", n0 + N)
        lp["replays_us_per_step"] = timed(lambda: self.cg.dec.launch(N),
                                          a.loop_reps, 1, reset)["median"] / N
        self.expect_pos("replays", n0 + N)
        if self.cg.gen is not None:
            lp["device_loop_us_per_token"] = timed(
                self.cg.gen.launch, a.loop_reps, 1, reset)["median"] / N
            lp["device_loop_pos_after"] = int(self.pos.item())
            out = self.out.view(B, N).cpu()
            lp["device_loop_equals_host_loop"] = bool(
                torch.equal(out, torch.stack(host_toks, 1)))
        step = self.length_row(n0)["us"].get("cudag")
        if "device_loop_us_per_token" in lp:
            dl = lp["device_loop_us_per_token"]
            if step:
                lp["device_loop_per_token_over_step"] = dl / step
            lp["device_loop_per_token_over_replays"] = \
                dl / lp["replays_us_per_step"]
            lp["host_loop_over_device_loop"] = lp["host_loop_us_per_token"] / dl
        log(f"  loops: {json.dumps(lp)}")

    def time_plain(self):
        a = self.a
        for n in self.lengths:
            f = self.step_plain(self.wwin[n])
            t = timed(f, a.eager_iters, a.eager_warm, self.at(n))
            self.expect_pos("torch eager", n + 1)
            self.put(n, "torch_eager", t)
            rep = self.capture(f)
            t = timed(rep, a.iters, a.warm, self.at(n))
            self.expect_pos("torch CUDA graph", n + 1)
            self.put(n, "torch_graph", t)
            self.graphs.clear()
            u = self.length_row(n)["us"]
            log(f"  torch at {n}: eager {u['torch_eager']:.1f}, CUDA graph "
                f"{u['torch_graph']:.1f} µs")

    def time_hf_eager(self):
        a, hf, B = self.a, self.hf, self.B
        gen = torch.Generator(device=DEV)
        gen.manual_seed(5)
        ids = torch.randint(0, self.d.V, (B,), device=DEV)
        for n in self.lengths:
            cache = hf.dynamic_cache()
            hf.fill_dynamic(cache, B, n, gen)
            position = torch.full((1,), n, dtype=torch.long, device=DEV)
            kw = hf.args(ids, position, cache)
            t = timed(lambda: hf.m(**kw), a.eager_iters, a.eager_warm,
                      lambda: hf.set_dynamic_len(cache, n))
            if cache.get_seq_length() != n + 1:
                raise RuntimeError("HF eager: the cache holds "
                                   f"{cache.get_seq_length()} tokens after a "
                                   f"step at {n}")
            self.put(n, "hf_eager", t)
            del cache, kw
            empty_cache()
            log(f"  HF eager at {n}: {t['median']:.1f} µs")

    # -- torch.compile (second pass) --------------------------------------------

    def compile_plain(self):
        """torch.compile of the plain step, timed as is and captured in a
        CUDA graph.  The window's size is made dynamic (through a tensor's
        shape) so that one compilation serves every length; where dynamo
        cannot keep it symbolic, each length compiles its own."""
        try:
            self._compile_plain(True)
        except Exception as e:      # noqa: BLE001 - retried, and said
            if "Constraint" not in type(e).__name__ and \
                    "Constraint" not in str(e)[:200]:
                raise
            self.row["notes"].append("torch.compile: the window could not stay "
                                     "dynamic; one compilation per length")
            self._compile_plain(False)

    def _compile_plain(self, dynamic):
        a, d, B = self.a, self.d, self.B
        w, inv = self.w, self.inv_freq
        # Caches of its own, one tensor per layer: a compiled function
        # mutates its inputs in place, views of one input less surely so.
        kl = [torch.zeros((B, d.NKV, self.ctx, d.HD), dtype=torch.bfloat16,
                          device=DEV) for _ in range(d.L)]
        vl = [torch.zeros_like(k) for k in kl]

        def fn(kc, vc, tok, pos, logits, win):
            plain_step(d, w, inv, kc, vc, tok, pos, logits, win.shape[0])
        torch._dynamo.reset()
        cf = torch.compile(fn, fullgraph=True,
                           dynamic=None if dynamic else False)

        def window(n):
            t = torch.empty(n, dtype=torch.int8, device=DEV)
            if dynamic:
                torch._dynamo.mark_dynamic(t, 0)
            return t
        wins = {n: window(self.wwin[n]) for n in self.lengths}

        def call(win):
            return lambda: cf(kl, vl, self.tok, self.pos, self.lg, win)
        # The checked run compiles it (first call).
        t0 = time.monotonic()
        self.pos.zero_()
        step = call(window(self.wcheck))

        def one(ids):
            self.tok.copy_(ids)
            step()
            return self.tok, self.lg
        run = forced_run(one, self.S_dev, self.T)
        self.row["compile_s"]["torch_compile"] = time.monotonic() - t0
        log(f"  torch.compile and the checked run: {time.monotonic() - t0:.1f} s")
        self.check("torch_compile", run)
        for n in self.lengths:
            f = call(wins[n])
            t = timed(f, a.eager_iters, a.eager_warm, self.at(n))
            self.expect_pos("torch.compile", n + 1)
            self.put(n, "torch_compile", t)
            rep = self.capture(f)
            t = timed(rep, a.iters, a.warm, self.at(n))
            self.expect_pos("torch.compile captured", n + 1)
            self.put(n, "torch_compile_graph", t)
            self.graphs.clear()
            u = self.length_row(n)["us"]
            log(f"  compiled at {n}: {u['torch_compile']:.1f}, captured "
                f"{u['torch_compile_graph']:.1f} µs")
        from torch._dynamo.utils import counters
        self.row["compile_counters"] = {
            "dynamic_window": dynamic,
            "unique_graphs": counters["stats"].get("unique_graphs", 0),
            "graph_breaks": sum(counters["graph_break"].values())}

    def compile_hf(self):
        """transformers' documented way: a StaticCache and model.forward
        under torch.compile(mode="reduce-overhead", fullgraph=True), which
        inductor replays as CUDA graphs.  The cache holds the largest length;
        every call attends over all of it, masked, as transformers does."""
        a, hf, B = self.a, self.hf, self.B
        torch._dynamo.reset()
        fwd = torch.compile(hf.m.forward, mode="reduce-overhead", fullgraph=True)
        cache = hf.static_cache(B, self.ctx, DEV)
        position = torch.zeros(1, dtype=torch.long, device=DEV)
        ids = torch.zeros(B, dtype=torch.long, device=DEV)

        def call():
            torch.compiler.cudagraph_mark_step_begin()
            return fwd(**hf.args(ids, position, cache)).logits[:, -1]
        # The forced run from an empty cache compiles it and checks it.
        t0 = time.monotonic()
        hf.set_static_len(cache, 0)
        t = [0]

        def one(s):
            ids.copy_(s)
            position.fill_(t[0])
            t[0] += 1
            lg = call().clone()
            return torch.argmax(lg, dim=-1), lg
        run = forced_run(one, self.S_dev, self.T)
        self.row["compile_s"]["hf_compile"] = time.monotonic() - t0
        log(f"  HF torch.compile and the checked run: {time.monotonic() - t0:.1f} s")
        self.check("hf_compile", run)
        for n in self.lengths:
            position.fill_(n)
            t = timed(call, a.iters_hf_compile, a.warm,
                      lambda n=n: hf.set_static_len(cache, n))
            cl = int(cache.layers[0].cumulative_length)
            if cl != n + 1:
                raise RuntimeError(f"HF static cache at {cl} after a step at {n}")
            self.put(n, "hf_compile", t)
            log(f"  HF compile at {n}: {t['median']:.1f} µs")
        from torch._dynamo.utils import counters
        c = {"unique_graphs": counters["stats"].get("unique_graphs", 0),
             "cudagraph_skips": counters["inductor"].get("cudagraph_skips", 0)}
        self.row["hf_compile_counters"] = c
        if c["cudagraph_skips"]:
            self.row["notes"].append("HF compile: inductor skipped its CUDA "
                                     "graphs (hf_compile_counters)")
        del cache, fwd

    def ratios(self):
        for r in self.row["lengths"]:
            u = r["us"]
            if "cudag" not in u:
                continue
            r["cudag_over_floor"] = u["cudag"] / r["floor_us"]
            t = {k: u[k] for k in TORCH_VARIANTS if k in u}
            if t:
                best = min(t, key=t.get)
                r["fastest_torch"] = best
                r["fastest_torch_over_cudag"] = t[best] / u["cudag"]
            if "cudag_full" in u:
                r["full_over_pdl"] = u["cudag_full"] / u["cudag"]

    def close(self):
        if self.cg is not None:
            try:
                self.cg.close()
            except Exception as e:  # noqa: BLE001 - a lost context says so
                log(f"closing the cudag execs: {e}")
        self.cg = None
        self.hf = None
        self.graphs.clear()


def check_context():
    """After a failure: is the CUDA context still usable?  A kernel fault
    poisons it for everything after, so the run then stops."""
    if DEV != "cuda":
        return
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device=DEV).add_(1).item()
    except Exception as e:  # noqa: BLE001
        raise SystemExit(f"bench_llama: the CUDA context is lost ({e}); "
                         "stopping with what was measured")


# ---- output ---------------------------------------------------------------------

def fmt(v, nd=1):
    return "" if v is None else (f"{v:.{nd}f}" if isinstance(v, float) else str(v))


def table(res):
    cols = ["cudag", "cudag_full"] + list(TORCH_VARIANTS)
    out = [f"Measured on {res['device']}, {res['date']} (PyTorch {res['torch']}, "
           f"transformers {res.get('transformers') or 'not run'}, copy bandwidth "
           f"{res.get('copy_bandwidth_GBps', 0):.0f} GB/s read + write; "
           f"{res.get('elapsed_s', 0):.0f} s).", ""]
    out.append("µs per decode step (median); floor = (weights + KV read) / copy "
               "bandwidth.")
    out.append("")
    out.append("| shape | B | KV | " + " | ".join(LABELS[c] for c in cols) +
               " | floor | cudag / floor | fastest torch / cudag | full / PDL |")
    out.append("| --- | --: | --: | " + " | ".join("--:" for _ in cols) +
               " | --: | --: | --: | --: |")
    for c in res["configs"]:
        for r in c["lengths"]:
            u = r["us"]
            cells = [fmt(u.get(k)) for k in cols]
            if u.get("cudag") is not None:
                cells[0] = f"**{cells[0]}**"
            out.append(f"| {c['shape']} | {c['B']} | {r['kv_len']} | " +
                       " | ".join(cells) + f" | {fmt(r['floor_us'])} | "
                       f"{fmt(r.get('cudag_over_floor'), 2)} | "
                       f"{fmt(r.get('fastest_torch_over_cudag'), 2)} | "
                       f"{fmt(r.get('full_over_pdl'), 2)} |")
    out += ["", "Token loop (µs per token, from the first KV length):", "",
            "| shape | B | step | N replays back to back | device loop | "
            "host loop (token read back) | device loop / step | "
            "host loop / device loop |",
            "| --- | --: | --: | --: | --: | --: | --: | --: |"]
    for c in res["configs"]:
        lp = c.get("loop")
        if not lp:
            continue
        step = next((r["us"].get("cudag") for r in c["lengths"]
                     if r["kv_len"] == lp["start_kv_len"]), None)
        out.append(f"| {c['shape']} | {c['B']} | {fmt(step)} | "
                   f"{fmt(lp.get('replays_us_per_step'))} | "
                   f"{fmt(lp.get('device_loop_us_per_token'))} | "
                   f"{fmt(lp.get('host_loop_us_per_token'))} | "
                   f"{fmt(lp.get('device_loop_per_token_over_step'), 3)} | "
                   f"{fmt(lp.get('host_loop_over_device_loop'), 3)} |")
    out += ["", "Correctness against the f32 reference (teacher-forced on its "
            "greedy tokens; a token differs only where the f32 logits of the "
            "two are near a tie):", "",
            "| shape | B | implementation | greedy tokens as f32 | first "
            "differing step | f32 logit gap there | final logits max abs | "
            "rel. norm |", "| --- | --: | --- | --: | --: | --: | --: | --: |"]
    for c in res["configs"]:
        for k in ["cudag", "cudag_full"] + list(TORCH_VARIANTS):
            r = c["correctness"].get(k)
            if not r:
                continue
            m = r["mismatches"][0] if r["mismatches"] else None
            gap = (m["f32_logit_of_f32_token"] - m["f32_logit_of_token"]) if m \
                else None
            out.append(f"| {c['shape']} | {c['B']} | {LABELS[k]} | "
                       f"{r['tokens_equal']}/{r['tokens']} | "
                       f"{fmt(r['first_mismatch_step'])} | {fmt(gap, 4)} | "
                       f"{r['final_logits_max_abs']:.3g} | "
                       f"{r['final_logits_rel_norm']:.2e} |")
    notes = []
    for c in res["configs"]:
        tag = f"{c['shape']} B={c['B']}"
        corr = c["correctness"]
        for k in ("pdl_equals_full_bitwise", "device_loop_equals_step_replays"):
            if k in corr:
                notes.append(f"{tag}: {k} = {corr[k]}")
        for k, v in c.get("graphs", {}).items():
            notes.append(f"{tag}: {k} graph: {v.get('nodes')} nodes, edges "
                         f"declared {v.get('edges_declared')}, programmatic as "
                         f"built {v.get('programmatic_built')} (the full-edge "
                         "exec: none)")
        for k, v in c["errors"].items():
            notes.append(f"{tag}: **{k} failed**: {v[:300]}")
        for s in c["skipped"] + c["notes"]:
            notes.append(f"{tag}: {s}")
    for s in res.get("skipped", []):
        notes.append(s)
    if notes:
        out += [""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def write(res, a):
    res["elapsed_s"] = time.monotonic() - T0
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table(res))


# ---- self-test (CPU) ---------------------------------------------------------------

def np_reference_step(d, w, kc, vc, tok, pos):
    """The contract's step in float64 NumPy, written independently of
    plain_step: loops over heads, RoPE by pairs (i, i + HD/2)."""
    import numpy as np
    th, lo, hi, orig = (ROPE[k] for k in ("theta", "low", "high", "orig"))
    fa = d.RF
    half = d.HD // 2
    inv = np.empty(half)
    for i in range(half):
        f = th ** (-(2 * i) / d.HD)
        wl = 2 * math.pi / f
        if wl < orig / hi:
            inv[i] = f
        elif wl > orig / lo:
            inv[i] = f / fa
        else:
            sm = (orig / wl - lo) / (hi - lo)
            inv[i] = (1 - sm) * f / fa + sm * f
    c, s = np.cos(pos * inv), np.sin(pos * inv)

    def rope(v):
        a, b = v[..., :half], v[..., half:]
        return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)

    def rms(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * g
    x = w["embed"][tok]
    nq, nk = d.NH * d.HD, d.NKV * d.HD
    for l in range(d.L):
        h = rms(x, w["attn_norm"][l])
        qkv = h @ w["wqkv"][l].T
        q = qkv[:, :nq].reshape(-1, d.NH, d.HD)
        k = rope(qkv[:, nq:nq + nk].reshape(-1, d.NKV, d.HD))
        v = qkv[:, nq + nk:].reshape(-1, d.NKV, d.HD)
        q = rope(q)
        kc[l, :, :, pos] = k
        vc[l, :, :, pos] = v
        o = np.empty((x.shape[0], d.NH, d.HD))
        for b in range(x.shape[0]):
            for j in range(d.NH):
                kv = j // (d.NH // d.NKV)
                sc = kc[l, b, kv, :pos + 1] @ q[b, j] / math.sqrt(d.HD)
                e = np.exp(sc - sc.max())
                o[b, j] = (e / e.sum()) @ vc[l, b, kv, :pos + 1]
        x = x + o.reshape(x.shape[0], nq) @ w["wo"][l].T
        h = rms(x, w["mlp_norm"][l])
        gu = h @ w["wgu"][l].T
        gt, up = gu[:, :d.F], gu[:, d.F:]
        x = x + (gt / (1 + np.exp(-gt)) * up) @ w["wd"][l].T
    return rms(x, w["final_norm"]) @ w["embed"].T


def compile_estimate(which, L, took):
    """Seconds one torch.compile variant of a configuration of L layers is
    expected to take: a rough cost (H100), or, once a configuration of it
    ran, that one's time scaled by layers, whichever is more.
    took[which] = (seconds, L) of the one that ran.  The rough cost alone
    let 1B batch 8 start with 81 s of the budget left and take 137 (H100,
    2026-11-26): where dynamo cannot keep the window dynamic, every length
    compiles its own.  The batch does not lengthen it (1B: 150 s at batch 1,
    137 at batch 8, the same day), so it has no part in it."""
    est = (60 if which == "plain" else 90) * L / 16 + 20
    if which in took:
        t0, L0 = took[which]
        est = max(est, t0 * L / L0)
    return est


def self_test():
    """The plain step against NumPy and (where importable) transformers,
    the cache handling for transformers, the comparison and the table, on
    the CPU with the tiny shape."""
    import numpy as np
    torch.manual_seed(0)
    d = dims("tiny")
    B, T, P = 2, 12, 4
    w = make_weights(d, "cpu", 3)
    inv = llama3_inv_freq(d)
    fails = []

    def expect(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            fails.append(what)

    S = torch.randint(0, d.V, (B, T))

    def plain_run(f32, W=64, per_layer=False):
        dt = torch.float32 if f32 else torch.bfloat16
        kc = torch.zeros((d.L, B, d.NKV, 80, d.HD), dtype=dt)
        vc = torch.zeros_like(kc)
        if per_layer:           # the compiled variant's caches
            kc, vc = [k.clone() for k in kc], [v.clone() for v in vc]
        tok = torch.zeros(B, dtype=torch.int32)
        pos = torch.zeros(1, dtype=torch.int32)
        lg = torch.zeros(B, d.V, dtype=dt)

        def one(ids):
            tok.copy_(ids)
            plain_step(d, w, inv, kc, vc, tok, pos, lg, W, f32=f32)
            return tok, lg
        toks, last = forced_run(one, S, T)
        expect(int(pos) == T, f"plain step (f32={f32}) advances pos to {T}")
        return toks, last
    # f32 plain step against float64 NumPy, every step's logits.
    wn = {k: v.double().numpy() for k, v in w.items()}
    kn = np.zeros((d.L, B, d.NKV, 80, d.HD))
    vn = np.zeros_like(kn)
    ref = []
    for t in range(T):
        ref.append(np_reference_step(d, wn, kn, vn, S[:, t].numpy(), t))
    t32, l32 = plain_run(True)
    rel = float(np.linalg.norm(l32.numpy() - ref[-1]) / np.linalg.norm(ref[-1]))
    expect(rel < 1e-5, f"plain f32 step = NumPy float64 (final logits rel "
           f"{rel:.1e})")
    am = np.stack([r.argmax(-1) for r in ref], 1)
    expect(bool((t32.numpy() == am).all()), "plain f32 greedy tokens = NumPy's")
    # A window wider than needed changes nothing (masked).
    t32w, l32w = plain_run(True, W=80)
    expect(torch.allclose(l32w, l32, rtol=0, atol=1e-5),
           "a wider attention window is masked")
    t32l, l32l = plain_run(True, per_layer=True)
    expect(torch.equal(l32l, l32) and torch.equal(t32l, t32),
           "caches as one tensor per layer: the same step")
    # bf16 against f32.
    t16, l16 = plain_run(False)
    rel16 = float((l16 - l32).norm() / l32.norm())
    expect(rel16 < 3e-2, f"plain bf16 step near f32 (rel {rel16:.1e})")
    inv_np = np.array([float(x) for x in inv])
    expect(inv_np.shape == (d.HD // 2,), "inv_freq has HD/2 entries")
    # The comparison.
    refns = SimpleNamespace(toks=t32, steps=torch.zeros(B, T, d.V), last=l32)
    res = {}
    r = compare("x", t32.clone(), l32.clone(), refns, P, res)
    expect(r["tokens_equal"] == B * (T - P + 1) and r["final_logits_max_abs"] == 0,
           "compare: identical runs agree")
    bad = t32.clone()
    bad[1, T - 2] += 1
    r = compare("y", bad, l32, refns, P, res)
    expect(r["first_mismatch_step"] == T - 2 and len(r["mismatches"]) == 1,
           "compare: one flipped token found at its step")
    # transformers on the CPU, where installed.
    try:
        import transformers  # noqa: F401
        have_hf = True
    except ImportError:
        have_hf = False
        print("skip transformers: not importable")
    if have_hf:
        w32 = {k: v.float() for k, v in w.items()}
        hf = HF(d, w32, "cpu", dtype=torch.float32)

        def hf_run(cache, static):
            pos = torch.zeros(1, dtype=torch.long)
            t = [0]

            def one(ids):
                pos.fill_(t[0])
                if static:
                    hf.set_static_len(cache, t[0])
                t[0] += 1
                lg = hf.m(**hf.args(ids, pos, cache)).logits[:, -1]
                return torch.argmax(lg, -1), lg
            return forced_run(one, S, T)
        th, lh = hf_run(hf.dynamic_cache(), False)
        relh = float((lh - l32).norm() / l32.norm())
        expect(relh < 1e-5, f"transformers f32 = plain f32 step (rel {relh:.1e})")
        expect(torch.equal(th, t32), "transformers f32 greedy tokens = plain's")
        ts, ls = hf_run(hf.static_cache(B, 80, "cpu"), True)
        rels = float((ls - l32).norm() / l32.norm())
        expect(rels < 1e-5, f"transformers StaticCache, length set by "
               f"set_static_len = plain f32 (rel {rels:.1e})")
        c = hf.dynamic_cache()
        g = torch.Generator(device="cpu")
        g.manual_seed(1)
        hf.fill_dynamic(c, B, 9, g)
        hf.set_dynamic_len(c, 5)
        expect(c.get_seq_length() == 5, "DynamicCache filled and truncated")
        p5 = torch.full((1,), 5, dtype=torch.long)
        hf.m(**hf.args(S[:, 0], p5, c))
        expect(c.get_seq_length() == 6, "a step at length 5 leaves 6 tokens")
        hb = HF(d, w, "cpu")
        cache = hb.dynamic_cache()
        pos = torch.zeros(1, dtype=torch.long)
        lgs = []
        for t in range(T):
            pos.fill_(t)
            lgs.append(hb.m(**hb.args(S[:, t], pos, cache)).logits[:, -1].float())
        relb = float((lgs[-1] - l16).norm() / l16.norm())
        expect(relb < 3e-2, f"transformers bf16 near plain bf16 (rel {relb:.1e})")
    # The table and the JSON of a made-up result.
    row = {"shape": "tiny", "B": B, "lengths": [
        {"kv_len": 128, "kv_bytes": 1, "floor_us": 10.0,
         "us": {"cudag": 11.0, "cudag_full": 13.0, "torch_eager": 50.0,
                "torch_graph": 20.0}, "spread": {}}],
        "correctness": res, "errors": {"x": "E"}, "notes": [], "skipped": [],
        "loop": {"start_kv_len": 128, "tokens": 128,
                 "device_loop_us_per_token": 11.1, "replays_us_per_step": 11.2,
                 "host_loop_us_per_token": 15.0,
                 "device_loop_per_token_over_step": 1.01,
                 "host_loop_over_device_loop": 1.35},
        "graphs": {"decode": {"nodes": 5, "edges_declared": {"full": 1},
                              "programmatic_built": 3}}}
    res_all = {"device": "cpu", "date": "today", "torch": torch.__version__,
               "copy_bandwidth_GBps": 1.0, "configs": [row], "skipped": []}
    c = Config.__new__(Config)
    c.row = row
    c.ratios()
    expect(abs(row["lengths"][0]["fastest_torch_over_cudag"] - 20 / 11) < 1e-9
           and row["lengths"][0]["fastest_torch"] == "torch_graph",
           "ratios: fastest PyTorch over cudag")
    text = table(res_all)
    expect("| tiny | 2 | 128 | **11.0** | 13.0 | 50.0 | 20.0 |" in text,
           "table row")
    json.dumps(res_all)
    print(text)
    a = parse(["--quick"])
    expect(a.shapes == ["1b"] and a.batches == [1] and not a.compile,
           "--quick: 1b, batch 1, no compilation")
    a = parse(["--compile", "plain", "--no-hf"])
    expect(a.compile == {"plain"}, "--compile plain")
    expect(compile_estimate("plain", 16, {}) == 80
           and compile_estimate("hf", 32, {}) == 200,
           "compile estimate: the rough cost before any ran")
    took = {"plain": (70.0, 16)}
    expect(compile_estimate("plain", 16, took) == 80
           and compile_estimate("plain", 32, took) == 140
           and compile_estimate("plain", 16, {"plain": (150.0, 16)}) == 150
           and compile_estimate("hf", 16, took) == 110,
           "compile estimate: scaled from the one that ran, never below the rough cost")
    print(f"{len(fails)} failed" if fails else "self-test passed")
    return 1 if fails else 0


# ---- main -------------------------------------------------------------------------

def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="1b, batch 1, KV 128 and 1024, few iterations, no "
                    "torch.compile (about a minute)")
    ap.add_argument("--shapes", default="1b,8b")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--lengths", default="128,1024,8192",
                    help="KV lengths; the first is the token loops' start")
    ap.add_argument("--compile", default="plain,hf",
                    help="which torch.compile variants: plain, hf, both, none")
    # 1B batch 8 before 8B: there the compiled and captured step is faster
    # than cudag's, the comparison a reader most needs, and it compiles in
    # half 8B's time.
    ap.add_argument("--compile-configs", default="1b:1,1b:8,8b:1,8b:8",
                    help="shape:batch pairs to compile for, in this order, "
                    "while the budget lasts")
    ap.add_argument("--no-hf", action="store_true", help="leave transformers out")
    ap.add_argument("--no-cudag", action="store_true",
                    help="PyTorch and transformers only")
    ap.add_argument("--budget-s", type=float, default=520,
                    help="start nothing that would end after this many seconds")
    ap.add_argument("--decode-graph", default=os.path.join(ROOT, "graphs",
                                                           "llama_decode.yaml"))
    ap.add_argument("--generate-graph", default=os.path.join(
        ROOT, "graphs", "llama_generate.yaml"),
        help="'' to leave the device loop out")
    ap.add_argument("--define", action="append", default=[],
                    metavar="NAME=INTEGER",
                    help="an integer -D for the cudag graphs, over the shape's "
                    "(repeatable): an A/B of AB, AS or AR in one call each")
    ap.add_argument("--gen-define", action="append", default=[],
                    metavar="NAME=INTEGER",
                    help="the same for the generate graph alone (U: steps a "
                    "`while` iteration)")
    ap.add_argument("--build", default=None,
                    help="a build tree: its src/libcudag.so and kernels/, "
                    "unless CUDAG_LIBRARY / CUDAG_KERNELS_DIR say otherwise")
    ap.add_argument("--ctx", type=int, default=0,
                    help="KV capacity (default: the largest length + margin)")
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--gen", type=int, default=32, help="greedy steps checked")
    ap.add_argument("--gen-tokens", type=int, default=128,
                    help="N of the device loop")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warm", type=int, default=10)
    ap.add_argument("--eager-iters", type=int, default=20)
    ap.add_argument("--eager-warm", type=int, default=3)
    ap.add_argument("--iters-hf-compile", type=int, default=50)
    ap.add_argument("--loop-reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the results here (after every step)")
    ap.add_argument("--markdown", help="write the table here")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                    help=argparse.SUPPRESS)     # cpu: a smoke run, tiny shape
    ap.add_argument("--self-test", action="store_true",
                    help="CPU checks of the plain step and the harness; no GPU")
    a = ap.parse_args(argv)
    if a.quick:
        a.shapes, a.batches, a.lengths = "1b", "1", "128,1024"
        a.compile, a.iters, a.warm, a.eager_iters, a.loop_reps = \
            "none", 30, 5, 5, 3
    a.shapes = [s for s in a.shapes.split(",") if s]
    for s in a.shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r} (one of {', '.join(SHAPES)})")
    a.batches = [int(b) for b in a.batches.split(",") if b]
    a.lengths = [int(n) for n in a.lengths.split(",") if n]
    a.compile = {"both": {"plain", "hf"}, "none": set()}.get(
        a.compile, set(x for x in a.compile.split(",") if x))
    if a.no_hf:
        a.compile.discard("hf")
    a.compile_configs = [(c.split(":")[0], int(c.split(":")[1]))
                         for c in a.compile_configs.split(",") if c]
    for opt in ("define", "gen_define"):
        defines = {}
        for kv in getattr(a, opt):
            k, eq, v = kv.partition("=")
            if not eq or not k.strip().isidentifier() or \
                    not v.strip().lstrip("-").isdigit():
                ap.error(f"--{opt.replace('_', '-')} {kv!r}: expected "
                         "NAME=INTEGER")
            defines[k.strip()] = int(v)
        setattr(a, opt, defines)
    return a


def main(argv=None):
    a = parse(argv)
    if a.self_test:
        return self_test()
    global DEV
    DEV = a.device
    if DEV == "cpu":
        a.no_cudag, a.compile = True, set()
    elif not torch.cuda.is_available():
        raise SystemExit("bench_llama: no CUDA device (--self-test runs on "
                         "the CPU)")
    torch.set_grad_enabled(False)
    deadline = T0 + a.budget_s
    cudag = None if a.no_cudag else import_cudag(a.build)
    tv = None
    if not a.no_hf:
        try:
            import transformers
            tv = transformers.__version__
        except ImportError as e:
            log(f"transformers not importable ({e}): left out")
            a.no_hf = True
            a.compile.discard("hf")
    stream = None
    if DEV == "cuda":
        stream = torch.cuda.Stream()
        torch.cuda.set_stream(stream)
    res = {"device": torch.cuda.get_device_name() if DEV == "cuda" else "cpu",
           "torch": torch.__version__,
           "transformers": tv,
           "cudag": cudag.library_version() if cudag else None,
           "date": datetime.date.today().isoformat(),
           "args": {k: (sorted(v) if isinstance(v, set) else v)
                    for k, v in vars(a).items()},
           "configs": [], "skipped": []}
    bw = copy_bandwidth()
    res["copy_bandwidth_GBps"] = bw / 1e9
    log(f"{res['device']}: copy bandwidth {bw / 1e9:.0f} GB/s (read + write)")
    rows = {}
    try:
        # First pass: everything but torch.compile, every configuration.
        for shape, B in ((s, b) for b in a.batches for s in a.shapes):
            # A rough cost (H100), to leave the budget's end to compilation.
            est = 20 * SHAPES[shape]["L"] / 16 * (1 + (B > 1))
            if time.monotonic() + est > deadline:
                res["skipped"].append(
                    f"{shape} B={B}: not run, {est:.0f} s needed and "
                    f"{deadline - time.monotonic():.0f} s of the budget left")
                continue
            log(f"== {shape} B={B}")
            c = None
            try:
                c = Config(a, shape, B, bw)
                res["configs"].append(c.row)
                rows[shape, B] = c.row
                run_base(c, a, cudag, stream)
            finally:
                if c is not None:
                    c.ratios()
                    c.close()
                del c
                gc.collect()
                empty_cache()
                write(res, a)
        # Second pass: torch.compile, the most telling configurations first.
        took = {}
        for shape, B in a.compile_configs:
            row = rows.get((shape, B))
            if row is None:
                continue
            for which in ("plain", "hf"):
                if which not in a.compile:
                    continue
                est = compile_estimate(which, SHAPES[shape]["L"], took)
                if time.monotonic() + est > deadline:
                    row["skipped"].append(
                        f"torch.compile ({which}): not run, about {est:.0f} s "
                        f"needed and {deadline - time.monotonic():.0f} s of "
                        "the budget left")
                    write(res, a)
                    continue
                log(f"== torch.compile ({which}): {shape} B={B}")
                c = None
                t0 = time.monotonic()
                try:
                    c = Config(a, shape, B, bw, row)
                    run_compile(c, which)
                finally:
                    if c is not None:
                        c.ratios()
                        c.close()
                    del c
                    gc.collect()
                    torch._dynamo.reset()
                    empty_cache()
                    write(res, a)
                    took.setdefault(which, (time.monotonic() - t0,
                                            SHAPES[shape]["L"]))
    finally:
        write(res, a)
        print(table(res))
    return 0


def run_base(c, a, cudag, stream):
    """The first pass for one configuration: bind, check, time (no
    torch.compile).  cudag's timings come before PyTorch's: they are the
    point of the run."""
    if cudag is not None:
        info = c.row.setdefault("graphs", {})
        c.cg = c.attempt("cudag_instantiate", lambda: Cudag(
            cudag, a, c.d, c.B, c.ctx, c.w, c.kc, c.vc, c.tok, c.pos,
            c.logits, c.out, stream, info))
    if not a.no_hf:
        c.hf = c.attempt("hf_build", lambda: HF(c.d, c.w, DEV))
    c.attempt("f32_reference", c.reference)
    if c.ref is None:
        return
    c.correctness()
    if c.cg is not None:
        c.attempt("time:cudag", c.time_cudag)
        c.attempt("time:loops", c.time_loops)
    c.attempt("time:torch", c.time_plain)
    if c.hf is not None:
        c.attempt("time:hf_eager", c.time_hf_eager)


def run_compile(c, which):
    """The second pass for one configuration and one compiled variant."""
    c.attempt("f32_reference", c.reference)
    if c.ref is None:
        return
    if which == "plain":
        c.attempt("torch_compile", c.compile_plain)
    else:
        c.hf = c.attempt("hf_build", lambda: HF(c.d, c.w, DEV))
        if c.hf is not None:
            c.attempt("hf_compile", c.compile_hf)


if __name__ == "__main__":
    sys.exit(main())
