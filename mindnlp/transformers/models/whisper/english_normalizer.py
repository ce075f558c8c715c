# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Whisper's text normalizers: what transcripts are reduced to before a word error rate is
counted, so that "Mr. Smith's colour" and "mister smith is color" score as the same words.

`BasicTextNormalizer` (any language) lower-cases, drops bracketed and parenthesised asides,
and turns symbols and punctuation into spaces (optionally dropping diacritics as well).
`EnglishTextNormalizer` also drops fillers (hmm, uh), expands contractions and titles,
writes spelled-out numbers as digits with their currency and percent signs
(`EnglishNumberNormalizer`), and maps British spellings to American ones with the
`normalizer.json` table a Whisper checkpoint ships. Both give the strings OpenAI's and Hugging
Face's normalizers give.
"""
import re
import unicodedata
from fractions import Fraction

# letters NFKD does not split into a base letter and a combining mark
_LETTER_FOLDS = {"œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ẞ": "SS",
                 "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "th", "ł": "l", "Ł": "L"}
_BRACKETED = re.compile(r"[<\[][^>\]]*[>\]]")
_PARENTHESISED = re.compile(r"\(([^)]+?)\)")
_SPACES = re.compile(r"\s+")


def _is_mark_symbol_or_punctuation(char):
    return unicodedata.category(char)[0] in "MSP"


def remove_symbols_and_diacritics(s, keep=""):
    """Marks, symbols and punctuation (except those in `keep`) become spaces and diacritics are
    dropped: the text is decomposed (NFKD), combining marks (Mn) removed, and the letters NFKD
    leaves whole folded to ASCII."""
    out = []
    for char in unicodedata.normalize("NFKD", s):
        if char in keep:
            out.append(char)
        elif char in _LETTER_FOLDS:
            out.append(_LETTER_FOLDS[char])
        elif unicodedata.category(char) == "Mn":
            continue
        else:
            out.append(" " if _is_mark_symbol_or_punctuation(char) else char)
    return "".join(out)


def remove_symbols(s):
    """Marks, symbols and punctuation become spaces; letters keep their diacritics (NFKC)."""
    return "".join(" " if _is_mark_symbol_or_punctuation(char) else char for char in unicodedata.normalize("NFKC", s))


def _graphemes(s):
    """The text cut into user-perceived characters: a character with the combining marks and
    zero-width-joined characters that follow it."""
    clusters = []
    for char in s:
        joins = clusters and (unicodedata.category(char)[0] == "M" or char == "\u200d"
                              or clusters[-1].endswith("\u200d"))
        if joins:
            clusters[-1] += char
        else:
            clusters.append(char)
    return clusters


def _drop_asides(s):
    """Lower-cased, without [bracketed] / <angled> and (parenthesised) text."""
    return _PARENTHESISED.sub("", _BRACKETED.sub("", s.lower()))


class BasicTextNormalizer:
    """Lower case, no asides, symbols and punctuation as spaces (see the module docstring);
    `split_letters` puts a space between every character."""

    def __init__(self, remove_diacritics=False, split_letters=False):
        self.clean = remove_symbols_and_diacritics if remove_diacritics else remove_symbols
        self.split_letters = split_letters

    def __call__(self, s):
        s = self.clean(_drop_asides(s)).lower()
        if self.split_letters:
            s = " ".join(_graphemes(s))
        return _SPACES.sub(" ", s)


def _fraction(text):
    try:
        return Fraction(text)
    except ValueError:
        return None


_NUMERIC = re.compile(r"^\d+(\.\d+)?$")


class EnglishNumberNormalizer:
    """Spelled-out numbers as digits: "twenty five" → "25", "one oh one" → "101" (digits said
    one by one are read as a numeral), "two point five" → "2.5", "double seven" → "77"; suffixes
    kept ("1960s", "twenty first" → "21st"); currencies and percent as signs ("twenty dollars" →
    "$20", "five percent" → "5%", "$2 and 7 cents" → "$2.07"); commas between digits dropped; a
    lone 1 written as "one"."""

    ONES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
            "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
    TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    MULTIPLIERS = ["hundred", "thousand", "million", "billion", "trillion", "quadrillion", "quintillion",
                   "sextillion", "septillion", "octillion", "nonillion", "decillion"]

    def __init__(self):
        self.zeros = {"o", "oh", "zero"}
        self.ones = {name: value for value, name in enumerate(self.ONES, start=1)}
        plural = {("sixes" if name == "six" else name + "s"): (value, "s") for name, value in self.ones.items()}
        irregular = {"zeroth": 0, "first": 1, "second": 2, "third": 3, "fifth": 5, "twelfth": 12}
        ordinal = {name: (value, {1: "st", 2: "nd", 3: "rd"}.get(value, "th")) for name, value in irregular.items()}
        ordinal.update({name + ("h" if name.endswith("t") else "th"): (value, "th")
                        for name, value in self.ones.items() if value > 3 and value not in (5, 12)})
        self.ones_suffixed = {**plural, **ordinal}
        self.tens = {name: 10 * value for value, name in enumerate(self.TENS, start=2)}
        self.tens_suffixed = {**{name[:-1] + "ies": (value, "s") for name, value in self.tens.items()},
                              **{name[:-1] + "ieth": (value, "th") for name, value in self.tens.items()}}
        self.multipliers = {name: 10 ** (2 if rank == 0 else 3 * rank) for rank, name in enumerate(self.MULTIPLIERS)}
        self.multipliers_suffixed = {**{name + "s": (value, "s") for name, value in self.multipliers.items()},
                                     **{name + "th": (value, "th") for name, value in self.multipliers.items()}}
        self.decimals = {*self.ones, *self.tens, *self.zeros}
        self.preceding_prefixers = {"minus": "-", "negative": "-", "plus": "+", "positive": "+"}
        self.following_prefixers = {"pound": "£", "pounds": "£", "euro": "€", "euros": "€", "dollar": "$",
                                    "dollars": "$", "cent": "¢", "cents": "¢"}
        self.prefixes = set(self.preceding_prefixers.values()) | set(self.following_prefixers.values())
        self.suffixers = {"per": {"cent": "%"}, "percent": "%"}
        self.specials = {"and", "double", "triple", "point"}
        self.words = set().union(self.zeros, self.ones, self.ones_suffixed, self.tens, self.tens_suffixed,
                                 self.multipliers, self.multipliers_suffixed, self.preceding_prefixers,
                                 self.following_prefixers, self.suffixers, self.specials)

    # ------------------------------------------------------------------ the word walk

    def process_words(self, words):
        """Yield the output words. The number being read is `value`: an int while it is a sum
        ("twenty five"), a string of digits once it is read digit by digit or has a decimal
        point; `prefix` is the sign or currency written before it."""
        state = {"value": None, "prefix": None}

        def emit(result):
            result = str(result)
            if state["prefix"] is not None:
                result = state["prefix"] + result
            state["value"] = state["prefix"] = None
            return result

        skip = False
        for i, current in enumerate(words):
            if skip:
                skip = False
                continue
            prev = words[i - 1] if i else None
            following = words[i + 1] if i + 1 < len(words) else None
            following_is_numeric = following is not None and _NUMERIC.match(following) is not None
            value = state["value"]
            has_prefix = current[0] in self.prefixes
            bare = current[1:] if has_prefix else current
            if _NUMERIC.match(bare):
                if value is not None:
                    if isinstance(value, str) and value.endswith("."):  # the digits after a spoken "point"
                        state["value"] = value + current
                        continue
                    yield emit(value)
                if has_prefix:
                    state["prefix"] = current[0]
                number = _fraction(bare)
                state["value"] = number.numerator if number.denominator == 1 else bare
            elif current not in self.words:
                if value is not None:
                    yield emit(value)
                yield emit(current)
            elif current in self.zeros:
                state["value"] = str(value or "") + "0"
            elif current in self.ones:
                state["value"] = self._add_ones(value, self.ones[current], prev)
            elif current in self.ones_suffixed:
                ones, suffix = self.ones_suffixed[current]
                yield emit(str(self._add_ones(value, ones, prev)) + suffix)
            elif current in self.tens:
                state["value"] = self._add_tens(value, self.tens[current])
            elif current in self.tens_suffixed:
                tens, suffix = self.tens_suffixed[current]
                yield emit(str(self._add_tens(value, tens)) + suffix)
            elif current in self.multipliers:
                yield from self._multiply(state, emit, self.multipliers[current])
            elif current in self.multipliers_suffixed:
                yield from self._multiply_suffixed(state, emit, *self.multipliers_suffixed[current])
            elif current in self.preceding_prefixers:
                if value is not None:
                    yield emit(value)
                if following in self.words or following_is_numeric:
                    state["prefix"] = self.preceding_prefixers[current]
                else:
                    yield emit(current)
            elif current in self.following_prefixers:
                if value is not None:
                    state["prefix"] = self.following_prefixers[current]
                    yield emit(value)
                else:
                    yield emit(current)
            elif current in self.suffixers:
                suffix = self.suffixers[current]
                if value is None:
                    yield emit(current)
                elif not isinstance(suffix, dict):
                    yield emit(str(value) + suffix)
                elif following in suffix:  # "per cent"
                    yield emit(str(value) + suffix[following])
                    skip = True
                else:
                    yield emit(value)
                    yield emit(current)
            else:
                special = self._special(state, emit, current, prev, following, following_is_numeric)
                for word in special:
                    yield word
                skip = special.skip_next
        if state["value"] is not None:
            yield emit(state["value"])

    def _add_ones(self, value, ones, prev):
        """The number after reading a unit word (one..nineteen): added when it fills the last
        zero(s) of a sum ("twenty" + "five"), appended as digits otherwise ("one" "one" → 11)."""
        if value is None:
            return ones
        if isinstance(value, str) or prev in self.ones:
            if prev in self.tens and ones < 10:  # "...twenty five" read digit-wise: replace the last zero
                return value[:-1] + str(ones)
            return str(value) + str(ones)
        if value % (10 if ones < 10 else 100) == 0:
            return value + ones
        return str(value) + str(ones)

    @staticmethod
    def _add_tens(value, tens):
        if value is None:
            return tens
        if isinstance(value, str) or value % 100 != 0:
            return str(value) + str(tens)
        return value + tens

    @staticmethod
    def _scaled(value, multiplier):
        """An int `value` times a multiplier, applied to what is below the thousands
        ("two thousand three" "hundred" → 2300)."""
        return value // 1000 * 1000 + value % 1000 * multiplier

    def _multiply(self, state, emit, multiplier):
        value = state["value"]
        if value is None:
            state["value"] = multiplier
        elif isinstance(value, str) or value == 0:
            number = _fraction(value)
            product = number * multiplier if number is not None else None
            if product is not None and product.denominator == 1:
                state["value"] = product.numerator
            else:
                yield emit(value)
                state["value"] = multiplier
        else:
            state["value"] = self._scaled(value, multiplier)

    def _multiply_suffixed(self, state, emit, multiplier, suffix):
        value = state["value"]
        if value is None:
            yield emit(str(multiplier) + suffix)
        elif isinstance(value, str):
            number = _fraction(value)
            product = number * multiplier if number is not None else None
            if product is not None and product.denominator == 1:
                yield emit(str(product.numerator) + suffix)
            else:
                yield emit(value)
                yield emit(str(multiplier) + suffix)
        else:
            yield emit(str(self._scaled(value, multiplier)) + suffix)
        state["value"] = None

    def _special(self, state, emit, current, prev, following, following_is_numeric):
        """The words "and", "double", "triple", "point": part of a number only when a number
        word follows ("and" only after a multiplier). Returns the words to output, with
        `skip_next` set when the following word was consumed."""
        words = _Output()
        value = state["value"]
        if following not in self.words and not following_is_numeric:
            if value is not None:
                words.append(emit(value))
            words.append(emit(current))
        elif current == "and":
            if prev not in self.multipliers:
                if value is not None:
                    words.append(emit(value))
                words.append(emit(current))
        elif current in ("double", "triple"):
            if following in self.ones or following in self.zeros:
                digit = str(self.ones.get(following, 0))
                state["value"] = str(value or "") + digit * (2 if current == "double" else 3)
                words.skip_next = True
            else:
                if value is not None:
                    words.append(emit(value))
                words.append(emit(current))
        elif following in self.decimals or following_is_numeric:  # "point"
            state["value"] = str(value or "") + "."
        return words

    # ------------------------------------------------------------------ around the walk

    def preprocess(self, s):
        """"<number> and a half" → "<number> point five"; digits and letters apart, except
        ordinal and plural suffixes ("21 st" → "21st")."""
        pieces = re.split(r"\band\s+a\s+half\b", s)
        kept = []
        for i, piece in enumerate(pieces):
            if not piece.strip():
                continue
            kept.append(piece)
            if i < len(pieces) - 1:
                last_word = piece.rsplit(maxsplit=2)[-1]
                numeric = last_word in self.decimals or last_word in self.multipliers
                kept.append("point five" if numeric else "and a half")
        s = " ".join(kept)
        s = re.sub(r"([a-z])([0-9])", r"\1 \2", s)
        s = re.sub(r"([0-9])([a-z])", r"\1 \2", s)
        return re.sub(r"([0-9])\s+(st|nd|rd|th|s)\b", r"\1\2", s)

    @staticmethod
    def postprocess(s):
        """"$2 and ¢7" → "$2.07", "$0.5" → "¢5", and a lone "1(s)" → "one(s)"."""

        def combine_cents(match):
            try:
                return f"{match.group(1)}{match.group(2)}.{int(match.group(3)):02d}"
            except ValueError:
                return match.string

        def cents_only(match):
            try:
                return f"¢{int(match.group(1))}"
            except ValueError:
                return match.string

        s = re.sub(r"([€£$])([0-9]+) (?:and )?¢([0-9]{1,2})\b", combine_cents, s)
        s = re.sub(r"[€£$]0.([0-9]{1,2})\b", cents_only, s)
        return re.sub(r"\b1(s?)\b", r"one\1", s)

    def __call__(self, s):
        s = self.preprocess(s)
        s = " ".join(word for word in self.process_words(s.split()) if word is not None)
        return self.postprocess(s)


class _Output(list):
    """Words to output, and whether the next input word was consumed."""

    skip_next = False


class EnglishSpellingNormalizer:
    """British spellings → American ones, word by word, from the checkpoint's normalizer.json."""

    def __init__(self, english_spelling_mapping):
        if english_spelling_mapping is None:
            raise ValueError("The English normalizer needs the British -> American spelling table: load the tokenizer "
                             "from a checkpoint that ships normalizer.json (or pass normalizer_file=)")
        self.mapping = english_spelling_mapping

    def __call__(self, s):
        return " ".join(self.mapping.get(word, word) for word in s.split())


# Contractions and abbreviations, in the order they are expanded: the specific before the
# general ("won't" before "n't", "'d been" before "'d").
_REPLACEMENTS = [
    (r"\bwon't\b", "will not"), (r"\bcan't\b", "can not"), (r"\blet's\b", "let us"), (r"\bain't\b", "aint"),
    (r"\by'all\b", "you all"), (r"\bwanna\b", "want to"), (r"\bgotta\b", "got to"), (r"\bgonna\b", "going to"),
    (r"\bi'ma\b", "i am going to"), (r"\bimma\b", "i am going to"), (r"\bwoulda\b", "would have"),
    (r"\bcoulda\b", "could have"), (r"\bshoulda\b", "should have"), (r"\bma'am\b", "madam"),
    *((rf"\b{short}\b", f"{long} ") for short, long in (
        ("mr", "mister"), ("mrs", "missus"), ("st", "saint"), ("dr", "doctor"), ("prof", "professor"),
        ("capt", "captain"), ("gov", "governor"), ("ald", "alderman"), ("gen", "general"), ("sen", "senator"),
        ("rep", "representative"), ("pres", "president"), ("rev", "reverend"), ("hon", "honorable"),
        ("asst", "assistant"), ("assoc", "associate"), ("lt", "lieutenant"), ("col", "colonel"),
        ("jr", "junior"), ("sr", "senior"), ("esq", "esquire"))),
    # perfect tenses ("'s done" is left alone: "it's done" or "he has done")
    (r"'d been\b", " had been"), (r"'s been\b", " has been"), (r"'d gone\b", " had gone"),
    (r"'s gone\b", " has gone"), (r"'d done\b", " had done"), (r"'s got\b", " has got"),
    (r"n't\b", " not"), (r"'re\b", " are"), (r"'s\b", " is"), (r"'d\b", " would"), (r"'ll\b", " will"),
    (r"'t\b", " not"), (r"'ve\b", " have"), (r"'m\b", " am"),
]


class EnglishTextNormalizer:
    """The English normalizer of the module docstring; `english_spelling_mapping` is the
    checkpoint's normalizer.json."""

    ignore_patterns = r"\b(hmm|mm|mhm|mmm|uh|um)\b"

    def __init__(self, english_spelling_mapping):
        self.replacers = dict(_REPLACEMENTS)
        self.standardize_numbers = EnglishNumberNormalizer()
        self.standardize_spellings = EnglishSpellingNormalizer(english_spelling_mapping)

    def __call__(self, s):
        s = re.sub(self.ignore_patterns, "", _drop_asides(s))
        s = re.sub(r"\s+'", "'", s)  # "it 's" → "it's"
        for pattern, replacement in self.replacers.items():
            s = re.sub(pattern, replacement, s)
        s = re.sub(r"(\d),(\d)", r"\1\2", s)
        s = re.sub(r"\.([^0-9]|$)", r" \1", s)  # a period not before a digit ends a sentence
        s = remove_symbols_and_diacritics(s, keep=".%$¢€£")  # the signs numbers keep
        s = self.standardize_spellings(self.standardize_numbers(s))
        s = re.sub(r"[.$¢€£]([^0-9])", r" \1", s)  # signs left without a number
        s = re.sub(r"([^0-9])%", r"\1 ", s)
        return _SPACES.sub(" ", s)


__all__ = ["BasicTextNormalizer", "EnglishNumberNormalizer", "EnglishSpellingNormalizer", "EnglishTextNormalizer"]
