# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mBART-50's tokenizer: mBART's, with 52 language codes placed first (`src_lang tokens </s>`,
targets `tgt_lang tokens </s>`) and the sentencepiece model's normalisation."""
from tokenizers import Regex, decoders, normalizers, pre_tokenizers

from ..mbart.tokenization_mbart import FAIRSEQ_LANGUAGE_CODES as MBART_LANGUAGE_CODES
from ..mbart.tokenization_mbart import MBartTokenizer

FAIRSEQ_LANGUAGE_CODES = MBART_LANGUAGE_CODES + [
    "af_ZA", "az_AZ", "bn_IN", "fa_IR", "he_IL", "hr_HR", "id_ID", "ka_GE", "km_KH", "mk_MK", "ml_IN", "mn_MN",
    "mr_IN", "pl_PL", "ps_AF", "pt_XX", "sv_SE", "sw_KE", "ta_IN", "te_IN", "th_TH", "tl_XX", "uk_UA", "ur_PK",
    "xh_ZA", "gl_ES", "sl_SI"]


class MBart50Tokenizer(MBartTokenizer):
    language_codes = FAIRSEQ_LANGUAGE_CODES

    @staticmethod
    def build_text_pipeline(backend, spm):
        """As HF reads a sentencepiece file: its normalisation table (NFKC for mBART-50's), runs
        of spaces as one, each word written with a leading "▁"."""
        steps = [normalizers.Precompiled(spm.precompiled_charsmap)] if spm.precompiled_charsmap else []
        backend.normalizer = normalizers.Sequence(steps + [normalizers.Replace(Regex(" {2,}"), " ")])
        backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)

    def language_tags(self, code):
        """mBART-50 writes `code tokens </s>`."""
        return [code], [self.eos_token_id]

    @property
    def cur_lang_code_id(self):
        return self.cur_lang_code


MBart50TokenizerFast = MBart50Tokenizer
