from .configuration_bert import BertConfig
from .tokenization_bert_fast import BertTokenizer, BertTokenizerFast
