from .configuration_gpt_oss import GptOssConfig
