"""What autograd saves for backward, measured on a small model (CPU).

saved_tensors_hooks sees every tensor packed for backward; the graph walk
(each node's _saved_* attributes, a custom Function's saved_tensors) names
the node that saved it, so that the saves Debian's torch 1.13 makes and
torch >= 2.2 does not (TORCH_1_13_ONLY) are taken out by name. Parameters and
buffers (model state, held whatever the workload) are excluded.
"""

import collections
import weakref

import torch

# Saves whose CPU kernel keeps a narrower dtype than the CUDA one: CUDA's
# layer_norm (aten/src/ATen/native/cuda/layer_norm_kernel.cu) allocates
# mean and rstd in acc_type (fp32) for 16-bit inputs; the CPU kernel in
# the input's dtype. Counted at 4 bytes an element.
CUDA_FP32 = {("NativeLayerNormBackward0", "_saved_result1"),
             ("NativeLayerNormBackward0", "_saved_result2")}

# Saves torch 1.13 makes that torch >= 2.2 does not, as (node name, saved
# attribute), each with the derivatives.yaml line that shows it.
TORCH_1_13_ONLY = {
    # 1.13 tools/autograd/derivatives.yaml, mean.dim:
    #   self: sum_backward(grad, self.sizes(), dim, keepdim).div_(
    #         _safe_size(self.sizes(), dim))  -- codegen saves self
    # 2.2: self: mean_backward(grad, self.sym_sizes(), dim,
    #             self.sym_numel(), keepdim)  -- sizes and numel only
    ("MeanBackward1", "_saved_self"),
}


def host_scalar(t):
    """A Python number wrapped as a 0-dim double or long tensor (a host
    scalar in a CUDA run, not device memory)."""
    return t.dim() == 0 and t.dtype in (torch.float64, torch.int64)


def storage_key(t):
    """(data pointer, bytes) of the storage under `t`."""
    st = t.storage()
    return st.data_ptr(), st.nbytes()


def state_storages(model):
    return {storage_key(t)[0]
            for t in list(model.parameters()) + list(model.buffers())}


class SavedRecorder:
    """Records the storage of every tensor packed for backward."""

    def __init__(self):
        self.packed = {}
        self.refs = collections.defaultdict(list)

    def pack(self, t):
        if host_scalar(t):
            return t
        ptr, n = storage_key(t)
        self.packed[ptr] = n
        self.refs[ptr].append(weakref.ref(t))
        return t

    def alive(self, ptr):
        """Whether a tensor packed on storage `ptr` is still held (a node
        the loss cannot reach is freed with its outputs, its saves too)."""
        return any(r() is not None for r in self.refs[ptr])

    @staticmethod
    def unpack(t):
        return t

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack,
                                                        self.unpack)


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


# The key under which graph_saves marks a CopySlices node.
COPY_SLICES = "copy_slices"


def graph_saves(root):
    """{storage ptr: [(node name, attribute, bytes)]} over the graph."""
    out = collections.defaultdict(list)
    seen, stack, held = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        held.append(node)  # keeps id(node) unique while walking
        seen.add(id(node))
        name = type(node).__name__
        if name == "CopySlices":
            out[COPY_SLICES] = []  # marks that the graph holds one
        attrs = [a for a in dir(node) if a.startswith("_saved_")]
        for a in attrs:
            try:
                value = getattr(node, a)
            except RuntimeError:
                continue
            for t in _tensors(value):
                if host_scalar(t):
                    continue
                ptr, n = storage_key(t)
                if (name, a) in CUDA_FP32 and t.element_size() == 2:
                    n *= 2
                out[ptr].append((name, a, n))
        if hasattr(node, "saved_tensors") and not attrs:
            try:
                for t in node.saved_tensors:
                    if isinstance(t, torch.Tensor):
                        ptr, n = storage_key(t)
                        out[ptr].append((name, "saved_tensors", n))
            except RuntimeError:
                pass
        for nxt, _ in node.next_functions:
            stack.append(nxt)
    return out


def saved_bytes(model, root, recorder):
    """(bytes under torch >= 2.2 on CUDA, bytes as 1.13 saved them on CPU,
    by-node table): unique storages packed for backward, model state
    excluded."""
    state = state_storages(model)
    walk = graph_saves(root)
    as_packed = {p: n for p, n in recorder.packed.items() if p not in state}
    # Sizes as CUDA keeps them (CUDA_FP32).
    packed = {p: max(n for _, _, n in walk[p]) if p in walk else n
              for p, n in as_packed.items()}
    walked = {p for p in walk if p not in state and p != COPY_SLICES}
    missing = set(packed) - walked
    if COPY_SLICES in walk:
        # An in-place op on a view (x[mask, :] = 0) is a CopySlices node
        # wrapping the op's node, whose saves Python cannot name: counted
        # as saved (the same under torch >= 2.2) while still held.
        for p in [p for p in missing if not recorder.alive(p)]:
            del packed[p], as_packed[p]
            missing.discard(p)
        for p in missing:
            walk[p].append(("CopySlices", "wrapped", packed[p]))
        walked |= missing
        missing = set()
    if missing:
        raise AssertionError("packed storages the graph walk did not name: "
                             f"{sorted(packed[p] for p in missing)}")
    raw = sum(as_packed.values())
    modern = 0
    table = collections.Counter()
    for p, n in packed.items():
        savers = {(name, a) for name, a, _ in walk[p]}
        if savers <= TORCH_1_13_ONLY:
            continue
        modern += n
        for name, a in sorted(savers):
            table[f"{name}.{a}"] += n
            break
    return modern, raw, table
