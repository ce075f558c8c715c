"""Fused kernels for mixture-of-experts layers ("batched_mm", "grouped_mm" experts implementations).

mindnlp has no MoE family yet, so there are no expert modules for these to run; they raise.
"""


def batched_mm_experts_forward(*args, **kwargs):
    raise NotImplementedError("batched_mm experts: mindnlp has no mixture-of-experts models yet")


def grouped_mm_experts_forward(*args, **kwargs):
    raise NotImplementedError("grouped_mm experts: mindnlp has no mixture-of-experts models yet")
