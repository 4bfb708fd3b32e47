"""Corpus BLEU as sacreBLEU computes it by default (Post 2018, "A Call for Clarity in Reporting BLEU
Scores"): tokenizer 13a (mteval-v13a.pl's tokenization), one reference per segment, n-grams up to 4,
clipped counts summed over the corpus, brevity penalty exp(1 - r/c) when c < r, and the 'exp' smoothing
(a zero n-gram match count k gives precision 100 / (2^k * total)). A small self-contained re-implementation
for bench/pytorch_mt.py; the scores to compare systems with come from `normlab data bleu --tokenize 13a`."""
import math
import re
from collections import Counter

_13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),  # punctuation and symbols
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period/comma unless preceded by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # period/comma unless followed by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash after a digit
]


def tokenize_13a(line):
    """sacreBLEU Tokenizer13a: the language-independent part of mteval-v13a, then its regexes."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = " %s " % line
    for rx, repl in _13A:
        line = rx.sub(repl, line)
    return line.split()


def corpus_bleu(hyps, refs, tokenize=tokenize_13a, max_n=4):
    """hyps, refs: lists of strings (one reference each). Returns {"bleu", "precisions", "bp", "hyp_len",
    "ref_len"}; BLEU and precisions in percent. Raises ValueError when the lists differ in length."""
    if len(hyps) != len(refs):
        raise ValueError("%d hypotheses but %d references" % (len(hyps), len(refs)))
    correct, total = [0] * max_n, [0] * max_n
    hyp_len = ref_len = 0
    for h, r in zip(hyps, refs):
        ht, rt = tokenize(h), tokenize(r)
        hyp_len, ref_len = hyp_len + len(ht), ref_len + len(rt)
        for n in range(1, max_n + 1):
            hc = Counter(tuple(ht[i:i + n]) for i in range(len(ht) - n + 1))
            rc = Counter(tuple(rt[i:i + n]) for i in range(len(rt) - n + 1))
            correct[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
            total[n - 1] += max(0, len(ht) - n + 1)
    precisions, smooth = [0.0] * max_n, 1.0
    for n in range(max_n):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    bp = 1.0 if hyp_len >= ref_len else (math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0)
    bleu = bp * math.exp(sum(math.log(p) for p in precisions) / max_n) if min(precisions) > 0 else 0.0
    return {"bleu": bleu, "precisions": precisions, "bp": bp, "hyp_len": hyp_len, "ref_len": ref_len}
