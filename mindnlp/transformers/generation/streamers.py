# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Streamers: receive tokens while `generate()` runs (`put`), then `end()`.

`TextStreamer` prints text as words complete; `TextIteratorStreamer` queues it for another
thread to iterate over, `AsyncTextIteratorStreamer` for a coroutine (`async for`). Output
matches Hugging Face's streamers piece for piece.
"""
import asyncio
from queue import Queue

__all__ = ["AsyncTextIteratorStreamer", "BaseStreamer", "TextIteratorStreamer", "TextStreamer"]


class BaseStreamer:
    """Interface: `put(token_ids)` once with the prompt, then once per generated token; `end()`."""

    def put(self, value):
        raise NotImplementedError()

    def end(self):
        raise NotImplementedError()


def _is_cjk(codepoint):
    """CJK Unified Ideographs (and extensions): written without spaces, so printed at once."""
    return (
        0x4E00 <= codepoint <= 0x9FFF or 0x3400 <= codepoint <= 0x4DBF or 0x20000 <= codepoint <= 0x2A6DF
        or 0x2A700 <= codepoint <= 0x2B73F or 0x2B740 <= codepoint <= 0x2B81F or 0x2B820 <= codepoint <= 0x2CEAF
        or 0xF900 <= codepoint <= 0xFAFF or 0x2F800 <= codepoint <= 0x2FA1F
    )


class TextStreamer(BaseStreamer):
    """Decode tokens as they arrive and print whole words (text up to the last space, all of it
    at a newline or after a CJK character), so a word is never printed half-formed.

    `skip_prompt` drops the first `put` (the prompt); `decode_kwargs` go to `tokenizer.decode`.
    Batch size 1 only, as in HF.
    """

    def __init__(self, tokenizer, skip_prompt=False, **decode_kwargs):
        self.tokenizer = tokenizer
        self.skip_prompt = skip_prompt
        self.decode_kwargs = decode_kwargs
        self.token_cache = []
        self.print_len = 0
        self.next_tokens_are_prompt = True

    def put(self, value):
        if len(value.shape) > 1 and value.shape[0] > 1:
            raise ValueError("TextStreamer only supports batch size 1")
        if len(value.shape) > 1:
            value = value[0]
        if self.skip_prompt and self.next_tokens_are_prompt:
            self.next_tokens_are_prompt = False
            return
        # The tokens since the last newline are decoded together: a token's text can depend on
        # its neighbours (merged bytes, leading spaces).
        self.token_cache.extend(value.tolist())
        text = self.tokenizer.decode(self.token_cache, **self.decode_kwargs)
        if text.endswith("\n"):
            printable_text = text[self.print_len:]
            self.token_cache = []
            self.print_len = 0
        elif len(text) > 0 and _is_cjk(ord(text[-1])):
            printable_text = text[self.print_len:]
            self.print_len += len(printable_text)
        else:
            printable_text = text[self.print_len:text.rfind(" ") + 1]
            self.print_len += len(printable_text)
        self.on_finalized_text(printable_text)

    def end(self):
        """Flush what is left and signal the end of the stream."""
        if self.token_cache:
            text = self.tokenizer.decode(self.token_cache, **self.decode_kwargs)
            printable_text = text[self.print_len:]
            self.token_cache = []
            self.print_len = 0
        else:
            printable_text = ""
        self.next_tokens_are_prompt = True
        self.on_finalized_text(printable_text, stream_end=True)

    def on_finalized_text(self, text, stream_end=False):
        """Print the new text (a newline at the end of the stream); subclasses redirect it."""
        print(text, flush=True, end="" if not stream_end else None)


class TextIteratorStreamer(TextStreamer):
    """Put the text pieces in a queue; iterate over the streamer (typically while `generate()`
    runs in another thread) to get them. `timeout` bounds each wait on the queue, so an
    iterating thread does not hang forever if generation fails (queue.Empty is raised)."""

    def __init__(self, tokenizer, skip_prompt=False, timeout=None, **decode_kwargs):
        super().__init__(tokenizer, skip_prompt, **decode_kwargs)
        self.text_queue = Queue()
        self.stop_signal = None
        self.timeout = timeout

    def on_finalized_text(self, text, stream_end=False):
        self.text_queue.put(text, timeout=self.timeout)
        if stream_end:
            self.text_queue.put(self.stop_signal, timeout=self.timeout)

    def __iter__(self):
        return self

    def __next__(self):
        value = self.text_queue.get(timeout=self.timeout)
        if value == self.stop_signal:
            raise StopIteration()
        return value


class AsyncTextIteratorStreamer(TextStreamer):
    """Like `TextIteratorStreamer`, for asyncio: create it inside a coroutine (it binds to the
    running event loop), run `generate()` in a thread, and `async for text in streamer`.

    The generating thread hands each piece to the loop with `call_soon_threadsafe`; `timeout`
    bounds each wait and raises TimeoutError when it runs out.
    """

    def __init__(self, tokenizer, skip_prompt=False, timeout=None, **decode_kwargs):
        super().__init__(tokenizer, skip_prompt, **decode_kwargs)
        self.text_queue = asyncio.Queue()
        self.stop_signal = None
        self.timeout = timeout
        self.loop = asyncio.get_running_loop()

    def on_finalized_text(self, text, stream_end=False):
        self.loop.call_soon_threadsafe(self.text_queue.put_nowait, text)
        if stream_end:
            self.loop.call_soon_threadsafe(self.text_queue.put_nowait, self.stop_signal)

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            value = await asyncio.wait_for(self.text_queue.get(), timeout=self.timeout)
        except asyncio.TimeoutError:
            raise TimeoutError() from None
        if value == self.stop_signal:
            raise StopAsyncIteration()
        return value
