# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The names of PEFT methods and of the tasks a PeftModel wraps, as HF peft spells them.

Both are `str` enums so that `config.peft_type == "LORA"` holds and they serialise to JSON
as their plain names.
"""
import enum


class PeftType(str, enum.Enum):
    """Every PEFT method; a method is usable once it is registered in `mindnlp.peft.mapping`."""

    PROMPT_TUNING = "PROMPT_TUNING"
    MULTITASK_PROMPT_TUNING = "MULTITASK_PROMPT_TUNING"
    P_TUNING = "P_TUNING"
    PREFIX_TUNING = "PREFIX_TUNING"
    LORA = "LORA"
    ADALORA = "ADALORA"
    ADAPTION_PROMPT = "ADAPTION_PROMPT"
    IA3 = "IA3"
    LOHA = "LOHA"
    LOKR = "LOKR"
    OFT = "OFT"
    BOFT = "BOFT"
    VERA = "VERA"


class TaskType(str, enum.Enum):
    """The task of the wrapped model; it picks the PeftModel subclass `get_peft_model` returns."""

    SEQ_CLS = "SEQ_CLS"
    SEQ_2_SEQ_LM = "SEQ_2_SEQ_LM"
    CAUSAL_LM = "CAUSAL_LM"
    TOKEN_CLS = "TOKEN_CLS"
    QUESTION_ANS = "QUESTION_ANS"
    FEATURE_EXTRACTION = "FEATURE_EXTRACTION"
