"""Judge a student's Function against one of lesson 8's challenges: the checks its part of the API needs
(gradgradcheck and a Hessian-vector product, forward-mode AD, an in-place change, a non-differentiable output,
torch.func's transforms), each against PyTorch's own op, and the verdict in words. Runs inside the sandbox,
as lesson 6's judge does (``judge.py``, whose ``Verdict`` it returns, each check in its ``checks``).
"""

from __future__ import annotations

import warnings

import torch
from torch.autograd.gradcheck import GradcheckError

from ..api_demos import (
    chain_grad,
    dual_tangent,
    error_text,
    hvp,
    later_grad,
    looped_grads,
    out_of_place_grad,
    ranked_grad,
)
from .api_challenges import API_CHALLENGES, ApiChallenge
from .diagnosis import varied_grad_output
from .judge import CLOSE, Verdict, check_points, in_sandbox, refused
from .sandbox import Sandbox
from .validator import Refused, explain_error, load, validate

Check = tuple[str, bool, str]


def _try(name: str, run, lines: list[int]) -> Check:
    """``run()`` gives (passed, what it found); what it raises fails the check, in words, with its line."""
    try:
        ok, detail = run()
    except Exception as exc:  # the student's code, or autograd refusing it: said, never our stack
        line, text = explain_error(exc)
        if line:
            lines.append(line)
        return name, False, text if line else error_text(exc)  # autograd's own words, whole
    return name, bool(ok), detail


# Details and notes are plain text (the page escapes them): no markdown, no code spans.


def _close(yours, want: torch.Tensor, x: torch.Tensor, what: str, ref: str) -> tuple[bool, str]:
    if not isinstance(yours, torch.Tensor) or yours.shape != want.shape:
        got = tuple(yours.shape) if isinstance(yours, torch.Tensor) else type(yours).__name__
        return False, f"{what} is {got}; {ref} gives shape {tuple(want.shape)}."
    diff = (yours.detach().double() - want.double()).abs()
    if torch.allclose(yours.detach().double(), want.double(), **CLOSE):
        return True, f"equal to {ref} (largest difference {diff.max().item():.1e})."
    j = int(diff.reshape(-1).argmax())
    at = x.reshape(-1)[j % x.numel()].item()
    return False, (f"{what} differs from {ref}: at input {at:.4g} yours is {yours.reshape(-1)[j].item():.6g}, "
                   f"{ref}'s {want.reshape(-1)[j].item():.6g}.")


def _gradcheck(apply, x: torch.Tensor, second: bool = False, **kw) -> tuple[bool, str]:
    run = torch.autograd.gradgradcheck if second else torch.autograd.gradcheck
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run(apply, (x.clone().requires_grad_(),), **kw)
    except GradcheckError as exc:
        return False, str(exc).strip().split("\n")[0].rstrip(",:") + "."
    return True, "passed."


def _spied(fn):
    """``fn`` with its classic methods watched: what forward told ctx (dirty inputs, non-differentiable outputs)
    and the gradients backward received."""
    seen = {"dirty": (), "non_differentiable": (), "received": []}

    def forward(ctx, *args):
        out = fn.forward(ctx, *args)
        seen.update(dirty=getattr(ctx, "dirty_tensors", None) or (),
                    non_differentiable=getattr(ctx, "non_differentiable", None) or ())
        return out

    def backward(ctx, *grads):
        seen["received"].append(grads)
        return fn.backward(ctx, *grads)

    spy = type(fn.__name__, (torch.autograd.Function,), {"forward": staticmethod(forward),
                                                         "backward": staticmethod(backward)})
    return spy, seen


def _forward(fn, *xs):
    with torch.no_grad():
        return fn.apply(*xs)


def _double_backward(fn, c: ApiChallenge, x: torch.Tensor, lines: list[int]) -> list[Check]:
    v = varied_grad_output(x.numel())
    return [
        _try(f"forward matches {c.reference_name}", lambda: _close(_forward(fn, x), c.reference(x), x, "forward",
                                                                   c.reference_name), lines),
        _try("gradcheck: backward matches the slope of forward", lambda: _gradcheck(fn.apply, x), lines),
        _try("gradgradcheck: backward's own derivative matches", lambda: _gradgradcheck(fn, x), lines),
        _try("H·v of ½·Σ sinh(x)², through your backward twice", lambda: _close(
            hvp(fn.apply, x, v), hvp(c.reference, x, v), x, "H·v", c.reference_name), lines),
    ]


def _gradgradcheck(fn, x: torch.Tensor) -> tuple[bool, str]:
    ok, detail = _gradcheck(fn.apply, x, second=True)
    if not ok:
        detail += (" Tensors your forward made (e^x, say) are constants to autograd when it differentiates "
                   "backward: save the input and compute from it in backward.")
    return ok, detail


def _forward_mode(fn, c: ApiChallenge, x: torch.Tensor, lines: list[int]) -> list[Check]:
    t = varied_grad_output(x.numel())
    want = torch.func.jvp(c.reference, (x,), (t,))[1]
    return [
        _try(f"forward matches {c.reference_name}", lambda: _close(_forward(fn, x), c.reference(x), x, "forward",
                                                                   c.reference_name), lines),
        _try("gradcheck: backward matches the slope of forward", lambda: _gradcheck(fn.apply, x), lines),
        _try("gradcheck(check_forward_ad=True): jvp matches the slope of forward", lambda: _gradcheck(
            fn.apply, x, check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False), lines),
        _try("torch.autograd.forward_ad: the output's tangent", lambda: _close(
            dual_tangent(fn.apply, x, t), want, x, "the tangent", c.reference_name), lines),
        _try("torch.func.jvp", lambda: _close(torch.func.jvp(fn.apply, (x,), (t,))[1], want, x, "the tangent",
                                              c.reference_name), lines),
    ]


def _in_place(fn, c: ApiChallenge, x: torch.Tensor, lines: list[int]) -> list[Check]:
    spy, seen = _spied(fn)
    h = x.clone().requires_grad_() * 1

    def changed() -> tuple[bool, str]:
        out = spy.apply(h)
        same = isinstance(out, torch.Tensor) and out.data_ptr() == h.data_ptr()
        if not same or not torch.equal(h.detach(), torch.relu(x)):
            return False, "forward must change its input itself (input[input < 0] = 0) and return it."
        return True, "the input itself is changed and returned."

    def marked() -> tuple[bool, str]:
        if any(t is h for t in seen["dirty"]):
            return True, "autograd knows the input changed."
        return False, "without ctx.mark_dirty(input), autograd does not know forward changed its input."

    return [
        _try("forward changes its input in place", changed, lines),
        _try("ctx.mark_dirty(input)", marked, lines),
        _try("another in-place op after it: y.mul_(2)", lambda: _close(
            chain_grad(fn.apply, x), out_of_place_grad(x, 2.0), x, "the gradient", "2 * torch.relu"), lines),
        _try("its input, used after the call", lambda: _close(
            later_grad(fn.apply, x), later_grad(torch.relu_, x), x, "the gradient", "torch.relu_"), lines),
        _try("gradcheck (on a copy of the input)", lambda: _gradcheck(lambda a: fn.apply(a.clone()), x), lines),
    ]


def _non_differentiable(fn, c: ApiChallenge, x: torch.Tensor, lines: list[int]) -> list[Check]:
    x = x[torch.randperm(x.numel(), generator=torch.Generator().manual_seed(3))]  # not already in order
    spy, seen = _spied(fn)
    out = []

    def sorted_like_torch() -> tuple[bool, str]:
        out.append(spy.apply(x.clone().requires_grad_()))
        got = out[0]
        if not (isinstance(got, tuple) and len(got) == 2):
            return False, "forward must return two tensors: return values, indices."
        values, indices = torch.sort(x)
        if not torch.equal(got[1], indices):
            return False, f"the indices are {got[1].tolist()}; torch.sort gives {indices.tolist()}."
        return _close(got[0], values, x, "the values", "torch.sort")

    def marked() -> tuple[bool, str]:
        if out and any(t is out[0][1] for t in seen["non_differentiable"]):
            return True, "the indices get no gradient."
        return False, "forward does not call ctx.mark_non_differentiable(indices)."

    def materialize() -> tuple[bool, str]:
        if not out or not isinstance(out[0], tuple):
            return False, "forward must return the values and the indices."
        out[0][0].sum().backward()  # the values used, the indices not
        got = seen["received"][-1] if seen["received"] else ()
        if len(got) == 2 and got[1] is None:
            return True, "grad_indices reaches backward as None."
        return False, ("backward received grad_indices as a tensor of zeros: call "
                       "ctx.set_materialize_grads(False) in forward.")

    return [
        _try("values and indices match torch.sort", sorted_like_torch, lines),
        _try("ctx.mark_non_differentiable(indices)", marked, lines),
        _try("ctx.set_materialize_grads(False)", materialize, lines),
        _try("gradcheck on the values (None included)", lambda: _gradcheck(lambda a: fn.apply(a)[0], x), lines),
        _try("the gradient of Σ (k+1)·values[k]", lambda: _close(
            ranked_grad(fn.apply, x), ranked_grad(torch.sort, x), x, "the gradient", "torch.sort"), lines),
    ]


def _torch_func(fn, c: ApiChallenge, x: torch.Tensor, lines: list[int]) -> list[Check]:
    batch = torch.stack([x, x / 2, -x])  # three samples
    by_row = torch.func.vmap(torch.func.grad(lambda r: fn.apply(r).sum()))
    return [
        _try(f"forward matches {c.reference_name}", lambda: _close(_forward(fn, x), c.reference(x), x, "forward",
                                                                   c.reference_name), lines),
        _try("gradcheck: backward matches the slope of forward", lambda: _gradcheck(fn.apply, x), lines),
        _try("torch.func.vmap over a batch of 3, against a loop", lambda: _close(
            torch.func.vmap(fn.apply)(batch), torch.stack([c.reference(r) for r in batch]), batch, "vmap's rows",
            c.reference_name), lines),
        _try("torch.func.grad", lambda: _close(
            torch.func.grad(lambda r: fn.apply(r).sum())(x), looped_grads(c.reference, x[None])[0], x,
            "the gradient", c.reference_name), lines),
        _try("vmap(grad): one gradient per sample, against a loop", lambda: _close(
            by_row(batch), looped_grads(c.reference, batch), batch, "the gradients", c.reference_name), lines),
    ]


PARTS = {"double_backward": _double_backward, "forward_mode": _forward_mode, "in_place": _in_place,
         "non_differentiable": _non_differentiable, "torch_func": _torch_func}


def judge_api(source: str, key: str) -> Verdict:
    """Every check of the challenge's part; an error in the student's code fails the checks it reached."""
    c = API_CHALLENGES[key]
    try:
        fn = load(source, form=c.form)
    except Refused as exc:
        return refused(key, exc)
    lines: list[int] = []
    checks = PARTS[key](fn, c, check_points(c)[0], lines)
    failed = [(name, detail) for name, ok, detail in checks if not ok]
    headline = (f"All {len(checks)} checks passed, against {c.reference_name}." if not failed else
                f"{len(failed)} of {len(checks)} checks failed.")
    notes = [note for words, note in NOTES.get(key, ()) if any(words in detail for _, detail in failed)]
    return Verdict(key, not failed, headline, tuple(f"{name}: {detail}" for name, detail in failed),
                   tuple(dict.fromkeys(notes)), error_line=lines[0] if lines else None, checks=tuple(checks))


NOTES = {  # words in a failed check's detail -> what to do, for the mistakes students make
    "forward_mode": (("not enough values to unpack", "In jvp, ctx.saved_tensors holds what setup_context kept "
                      "with ctx.save_for_forward, not with save_for_backward."),),
    "torch_func": (("vmap support", "Add generate_vmap_rule = True to the class: vmap then runs your forward "
                    "and setup_context on the whole batch."),),
}


def check_api(source: str, key: str, sandbox: Sandbox | None = None, owner: str | None = None) -> Verdict:
    """Validate here (a refusal runs nothing), then judge in the sandbox, as lesson 6's ``check`` does."""
    try:
        validate(source, form=API_CHALLENGES[key].form)
    except Refused as exc:
        return refused(key, exc)
    return in_sandbox(judge_api, source, key, sandbox, owner)
