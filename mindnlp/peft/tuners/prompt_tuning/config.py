# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PromptTuningConfig`: HF peft's fields and defaults for prompt tuning."""
import enum
from dataclasses import dataclass, field
from typing import Optional, Union

from ...config import PromptLearningConfig
from ...utils.peft_types import PeftType


class PromptTuningInit(str, enum.Enum):
    TEXT = "TEXT"
    SAMPLE_VOCAB = "SAMPLE_VOCAB"
    RANDOM = "RANDOM"


@dataclass
class PromptTuningConfig(PromptLearningConfig):
    """Prompt tuning (Lester et al., 2021): `num_virtual_tokens` trained embeddings prepended to the input.

    `prompt_tuning_init`: RANDOM (N(0, 1), may lie off the embedding manifold), SAMPLE_VOCAB
    (embeddings of random vocabulary tokens) or TEXT (embeddings of `prompt_tuning_init_text`
    tokenised with `tokenizer_name_or_path`, repeated or cut to length).
    """

    prompt_tuning_init: Union[PromptTuningInit, str] = field(default=PromptTuningInit.RANDOM,
                                                             metadata={"help": "How to initialise the prompt"})
    prompt_tuning_init_text: Optional[str] = field(default=None, metadata={"help": "Text for TEXT init"})
    tokenizer_name_or_path: Optional[str] = field(default=None, metadata={"help": "Tokenizer for TEXT init"})
    tokenizer_kwargs: Optional[dict] = field(default=None, metadata={"help": "AutoTokenizer.from_pretrained "
                                                                             "kwargs for TEXT init"})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.PROMPT_TUNING
        if self.prompt_tuning_init == PromptTuningInit.TEXT and not self.tokenizer_name_or_path:
            raise ValueError(f"When prompt_tuning_init='{PromptTuningInit.TEXT.value}', tokenizer_name_or_path can't "
                             f"be {self.tokenizer_name_or_path}.")
        if self.prompt_tuning_init == PromptTuningInit.TEXT and self.prompt_tuning_init_text is None:
            raise ValueError(f"When prompt_tuning_init='{PromptTuningInit.TEXT.value}', prompt_tuning_init_text can't "
                             f"be {self.prompt_tuning_init_text}.")
        if self.tokenizer_kwargs and self.prompt_tuning_init != PromptTuningInit.TEXT:
            raise ValueError(f"tokenizer_kwargs only valid when using prompt_tuning_init='"
                             f"{PromptTuningInit.TEXT.value}'.")
