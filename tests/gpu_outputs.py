"""Output checks shared by the GPU test files. Every GPU result is written into a NaN-poisoned [M, N]
view with padded rows inside guard rows: an element the kernel skips stays NaN, a write outside the
view changes a guard. Results are compared with the CPU oracle by relative Frobenius error."""
import torch

POISON = float("nan")
GUARD = 7.0  # written into guard rows / padding columns, must survive untouched (every out dtype holds it)


def rel_fro(out, ref):
    """||out - ref||_F / ||ref||_F in float64."""
    out, ref = out.double().cpu(), ref.double().cpu()
    return (torch.linalg.norm(out - ref) / torch.linalg.norm(ref)).item()


def guarded_out(M, N, dtype, device, pad_cols=24, guard_rows=3):
    """(buffer, view): an [M, N] view with pad_cols of row padding inside a buffer with guard_rows above
    and below; padding and guard rows hold GUARD, the view holds POISON."""
    buf = torch.full((M + 2 * guard_rows, N + pad_cols), GUARD, dtype=dtype, device=device)
    view = buf[guard_rows:guard_rows + M, :N]
    view.fill_(POISON)
    return buf, view


def check_guards(buf, M, N, guard_rows=3, what=""):
    """Asserts that the guard rows and the row padding of a guarded_out buffer are untouched."""
    prefix = f"{what}: " if what else ""
    assert torch.all(buf[:guard_rows] == GUARD), prefix + "write above the output"
    assert torch.all(buf[guard_rows + M:] == GUARD), prefix + "write below the output"
    assert torch.all(buf[guard_rows:guard_rows + M, N:] == GUARD), prefix + "write into row padding"
