"""Compute+comms orders: PyTorch's lowering, Mario's, how they differ and why both are safe.

PyTorch 2.15 lowers a compute_only order (_PipelineScheduleRuntime._prepare_schedule_with_comms)
in four passes: per rank _add_unshard_reshard (FSDP) and _add_reduce_grad (REDUCE_GRAD and
WAIT_REDUCE_GRAD after a stage's last backward), then _add_send_recv over all ranks (a round
robin, one action per rank per round; the RECV goes to the receiver's program when the sender
issues the SEND), then _add_wait_send. Every action takes a turn in that round robin, so the
FSDP and wait actions can move where RECVs land on other ranks.
"""
from collections import Counter, defaultdict

from pytorch_peer import schedules as S

FSDP = {"UNSHARD", "RESHARD"}
WAITS = {"WAIT_SEND_F", "WAIT_SEND_B", "WAIT_REDUCE_GRAD"}
RECVS = {"RECV_F", "RECV_B"}


def kind(action):
    return action.computation_type.value


def without(rows, kinds):
    return {rank: [a for a in row if kind(a) not in kinds] for rank, row in rows.items()}


def as_text(rows):
    return {rank: [str(a) for a in row] for rank, row in rows.items()}


def has_kinds(rows, kinds):
    return any(kind(a) in kinds for row in rows.values() for a in row)


def lower_without_fsdp(compute_order, stage_rank, num_stages, microbatches,
                       wait_reduce_grad_takes_turn):
    """PyTorch's own lowering passes, in its order, minus _add_unshard_reshard (Mario models
    no FSDP). Every action takes a turn in _add_send_recv's round robin, WAIT_REDUCE_GRAD
    included; with wait_reduce_grad_takes_turn False it is taken out for the round robin and
    put back right after its REDUCE_GRAD, where _add_reduce_grad had put it."""
    rows = {rank: S._add_reduce_grad([a for a in order if a is not None], microbatches)
            for rank, order in compute_order.items()}
    if not wait_reduce_grad_takes_turn:
        rows = without(rows, {"WAIT_REDUCE_GRAD"})
    rows = S._add_send_recv(rows, stage_to_rank=lambda s: stage_rank[s], num_stages=num_stages)
    if not wait_reduce_grad_takes_turn:
        rows = {rank: _wait_after_each_reduce_grad(row) for rank, row in rows.items()}
    return S._add_wait_send(rows)


def _wait_after_each_reduce_grad(row):
    out = []
    for action in row:
        out.append(action)
        if kind(action) == "REDUCE_GRAD":
            out.append(S._Action(action.stage_index, S.WAIT_REDUCE_GRAD))
    return out


COMMS = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")


def message(action, stage_rank):
    """(direction, peer rank, what travels) of a SEND or RECV cell.

    A forward activation of stage s goes from s to s+1, a gradient from s to s-1; the message
    is named by the producing stage so that a SEND and its RECV name the same thing."""
    k, s, mb = kind(action), action.stage_index, action.microbatch_index
    if k == "SEND_F":
        return "send", stage_rank[s + 1], ("F", s, mb)
    if k == "RECV_F":
        return "recv", stage_rank[s - 1], ("F", s - 1, mb)
    if k == "SEND_B":
        return "send", stage_rank[s - 1], ("B", s, mb)
    return "recv", stage_rank[s + 1], ("B", s + 1, mb)


def per_peer_sequences(rows, stage_rank):
    """(rank, direction, peer) -> the messages in program order."""
    sequences = defaultdict(list)
    for rank, row in rows.items():
        for action in row:
            if kind(action) in COMMS:
                direction, peer, what = message(action, stage_rank)
                sequences[(rank, direction, peer)].append(what)
    return sequences


def rendezvous_problem(rows, stage_rank):
    """None when the programs finish with every SEND and RECV blocking until its peer posts
    the matching one (NCCL pairs a rank pair's operations in posting order; blocking is the
    strictest reading, so a program that passes runs under any buffering). Else what stalls.
    """
    sequences = per_peer_sequences(rows, stage_rank)
    for (rank, direction, peer), sent in sequences.items():
        if direction == "send" and sequences.get((peer, "recv", rank), []) != sent:
            received = sequences.get((peer, "recv", rank), [])
            return (f"rank {rank} sends to rank {peer} in the order {sent[:6]}..., "
                    f"rank {peer} receives {received[:6]}...")
    comms = {rank: [message(a, stage_rank) for a in row if kind(a) in COMMS]
             for rank, row in rows.items()}
    at = {rank: 0 for rank in comms}
    while True:
        progress = False
        for rank, ops in comms.items():
            if at[rank] == len(ops):
                continue
            direction, peer, what = ops[at[rank]]
            if at[peer] < len(comms[peer]):
                other = comms[peer][at[peer]]
                if other == ("recv" if direction == "send" else "send", rank, what):
                    at[rank] += 1
                    at[peer] += 1
                    progress = True
        if all(at[r] == len(ops) for r, ops in comms.items()):
            return None
        if not progress:
            stuck = [f"rank {r} at {comms[r][at[r]]}" for r in comms if at[r] < len(comms[r])]
            return "blocking send/recv deadlock: " + "; ".join(stuck)


def _dry_run(rows, stage_rank, num_stages):
    try:
        S._simulate_comms_compute(rows, lambda s: stage_rank[s], num_stages)
        return None
    except Exception as error:  # it raises ValueError on a stall, others on bad input
        return f"{type(error).__name__}: {error}"


def pytorch_dry_run_problem(rows, stage_rank, num_stages):
    """PyTorch's own dry run (_simulate_comms_compute) of a compute+comms order. It knows
    compute, SEND/RECV and send waits only: FSDP and gradient-reduction cells (rank-local)
    are left out and an overlapped pair is run as its two halves."""
    local = FSDP | {"REDUCE_GRAD", "WAIT_REDUCE_GRAD"}
    flat = {}
    for rank, row in rows.items():
        flat[rank] = []
        for action in row:
            if kind(action) in local:
                continue
            flat[rank].extend(action.sub_actions or (action,))
    return _dry_run(flat, stage_rank, num_stages)


def pytorch_dry_run_as_written(rows, stage_rank, num_stages):
    """The same dry run on the order as written: in PyTorch 2.15 it raises on the first cell
    it does not know ("Unsupported action type 1REDUCE_GRAD", UNSHARD in PyTorch's own
    lowering, KeyError -1 for an overlapped pair), so a compute+comms file, Mario's or
    PyTorch's, only dry-runs without those cells. None if it ran."""
    return _dry_run({rank: list(row) for rank, row in rows.items()}, stage_rank, num_stages)


def recv_only_difference(mine, theirs, stage_rank):
    """None when two lowerings differ at most in where RECVs sit: the same program once RECVs
    are removed, and per rank and sending peer the same RECVs in the same order (so NCCL
    pairs the same messages). Else the first way they differ."""
    for rank in sorted(theirs):
        a = [str(x) for x in mine.get(rank, []) if kind(x) not in RECVS]
        b = [str(x) for x in theirs[rank] if kind(x) not in RECVS]
        if a != b:
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return f"rank {rank} without RECVs differs at {i}: {a[i:i + 3]} vs {b[i:i + 3]}"
        if Counter(str(x) for x in mine[rank]) != Counter(str(x) for x in theirs[rank]):
            return f"rank {rank}: different multisets of cells"
    mine_seq = per_peer_sequences(mine, stage_rank)
    their_seq = per_peer_sequences(theirs, stage_rank)
    for key in sorted(set(mine_seq) | set(their_seq)):
        if key[1] == "recv" and mine_seq.get(key) != their_seq.get(key):
            return f"rank {key[0]} receives from rank {key[2]} in another order"
    return None


def first_difference(mine, theirs):
    for rank in sorted(theirs):
        a, b = mine.get(rank, []), theirs[rank]
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"rank {rank}, cell {i}: mario {a[max(0, i - 2):i + 3]}, " \
                       f"PyTorch {b[max(0, i - 2):i + 3]}"
        if len(a) != len(b):
            return f"rank {rank}: mario {len(a)} cells, PyTorch {len(b)}"
    return "equal"
