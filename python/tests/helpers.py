"""Test helpers: small-integer inputs and exact comparison against torch.

With values in [-3, 3] the fp32 accumulation of tcgemm and of the fp32
reference is exact (sums stay far below 2^24), so the result rounded to the
output dtype must equal the reference rounded the same way, bit for bit;
alpha and beta are powers of two or small integers for the same reason.
"""


def ints(torch, *shape, dtype=None):
    """A CUDA tensor of random integers in [-3, 3] (bf16 unless dtype says)."""
    dtype = dtype or torch.bfloat16
    return torch.randint(-3, 4, shape, device="cuda").to(dtype)


def reference(torch, a, b, out_dtype, alpha=1.0, beta=0.0, c=None):
    """alpha * a @ b + beta * c in true fp32, rounded to out_dtype."""
    ref = torch.matmul(a.float(), b.float()) * alpha
    if beta != 0.0:
        ref = ref + beta * c.float()
    return ref.to(out_dtype)


def assert_exact(torch, got, want):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype,
                                                                 want.shape, want.dtype)
    if not torch.equal(got, want):
        diff = (got.float() - want.float()).abs()
        # NaN (an element never written, into a NaN-filled out) counts too.
        differ = int((got.float() != want.float()).sum())
        nans = int(diff.isnan().sum())
        raise AssertionError(f"{differ} of {diff.numel()} elements differ ({nans} NaN); "
                             f"max |diff| {diff.nan_to_num().max().item()}")
