"""Hugging Face transformers' public API on mindnlp.core.

`from mindnlp.transformers import AutoModel, AutoTokenizer` works as the same names do in
Hugging Face transformers.
"""
from .configuration_utils import PretrainedConfig, PreTrainedConfig
from .generation.configuration_utils import GenerationConfig
from .models.auto.configuration_auto import CONFIG_MAPPING, AutoConfig
from .models.bert.configuration_bert import BertConfig
from .models.distilbert.configuration_distilbert import DistilBertConfig
from .models.gemma.configuration_gemma import GemmaConfig
from .models.gpt2.configuration_gpt2 import GPT2Config
from .models.llama.configuration_llama import LlamaConfig
from .models.mistral.configuration_mistral import MistralConfig
from .models.qwen2.configuration_qwen2 import Qwen2Config
from .models.roberta.configuration_roberta import RobertaConfig
from .models.xlm_roberta.configuration_xlm_roberta import XLMRobertaConfig
from .tokenization_utils_base import BatchEncoding, PreTrainedTokenizerBase
from .tokenization_utils_fast import PreTrainedTokenizerFast, TokenizersBackend
from .models.auto.tokenization_auto import TOKENIZER_MAPPING, AutoTokenizer
from .models.bert.tokenization_bert_fast import BertTokenizer, BertTokenizerFast
from .models.distilbert.tokenization_distilbert_fast import DistilBertTokenizer, DistilBertTokenizerFast
from .models.gemma.tokenization_gemma_fast import GemmaTokenizer, GemmaTokenizerFast
from .models.gpt2.tokenization_gpt2_fast import GPT2Tokenizer, GPT2TokenizerFast
from .models.llama.tokenization_llama_fast import LlamaTokenizer, LlamaTokenizerFast
from .models.qwen2.tokenization_qwen2_fast import Qwen2Tokenizer, Qwen2TokenizerFast
from .models.roberta.tokenization_roberta_fast import RobertaTokenizer, RobertaTokenizerFast
