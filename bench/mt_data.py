"""Reading `normlab data prepare` output for translation (docs/data-format.md) and fairseq-style token
batching (fairseq data_utils.batch_by_size / LanguagePairDataset.collater, as src/data/text/batching.h)
for bench/pytorch_mt.py. numpy only; the batches become torch tensors in the caller."""
import json
import os
import sys

import numpy as np

PAD, EOS = 1, 2  # fairseq Dictionary ids
PREPARE_HINT = ("prepare it with: build/normlab data prepare multi30k --data /work/shared/data/multi30k "
                "--out DIR   (then pass --data DIR)")


def fail(msg):
    """Exits with status 2 and `msg` on stderr (missing or malformed data)."""
    sys.stderr.write("error: %s\n" % msg)
    sys.exit(2)


def require(path):
    if not os.path.exists(path):
        fail("%s: not found; %s" % (path, PREPARE_HINT))
    return path


def read_token_bin(path):
    """An NLTOKDS1 file -> list of N int64 numpy arrays (the sequences). Checks magic, version and size."""
    require(path)
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic != b"NLTOKDS1":
        fail("%s: not an NLTOKDS1 token file (magic %r)" % (path, magic))
    h = np.fromfile(path, dtype="<i8", count=8)
    version, width = int(h[1] & 0xFFFFFFFF), int(h[1] >> 32)
    n, t = int(h[2]), int(h[3])
    if version != 1 or width != 4 or os.path.getsize(path) != 64 + 8 * (n + 1) + 4 * t:
        fail("%s: unsupported version/width or wrong size; re-run normlab data prepare" % path)
    off = np.fromfile(path, dtype="<i8", count=n + 1, offset=64)
    ids = np.fromfile(path, dtype="<i4", offset=64 + 8 * (n + 1)).astype(np.int64)
    return [ids[off[i]:off[i + 1]] for i in range(n)]


def read_dict(path):
    """fairseq dict.txt -> list of symbols by id: <s>, <pad>, </s>, <unk>, then line k -> id k + 3."""
    require(path)
    symbols = ["<s>", "<pad>", "</s>", "<unk>"]
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#fairseq:"):
                symbols.append(line.rsplit(" ", 1)[0])
    return symbols


def load_prepared(data_dir):
    """The prepared MT folder: (summary, direction (src, tgt), symbols, {split: (src seqs, tgt seqs)})
    for train/valid/test. Requires a joint dictionary (share_all_embeddings)."""
    summary = json.load(open(require(os.path.join(data_dir, "summary.json")), encoding="utf-8"))
    pair = summary.get("direction")
    if not pair or "-" not in pair:
        fail("%s/summary.json has no translation direction: not an MT folder; %s" % (data_dir, PREPARE_HINT))
    src, tgt = pair.split("-")
    if not summary.get("joint_dictionary", False):
        fail("%s: dictionaries are separate; share_all_embeddings needs a joint one (drop --separate-dict "
             "when preparing)" % data_dir)
    symbols = read_dict(os.path.join(data_dir, "dict.%s.txt" % tgt))
    splits = {}
    for name in ("train", "valid", "test"):
        splits[name] = tuple(read_token_bin(os.path.join(data_dir, "%s.%s.%s.bin" % (name, pair, lang)))
                             for lang in (src, tgt))
        if len(splits[name][0]) != len(splits[name][1]):
            fail("%s: %s has %d source but %d target sentences" % (data_dir, name, len(splits[name][0]),
                                                                  len(splits[name][1])))
    return summary, (src, tgt), symbols, splits


def plan_batches(src_lens, tgt_lens, max_tokens, max_positions=1024, max_sentences=0):
    """Orders examples by (source length, target length, index), drops those longer than max_positions
    on either side, and packs greedily: an example joins the batch while (B + 1) * max(T_max, its length)
    <= max_tokens (and B < max_sentences if > 0). Returns (list of index arrays, dropped indices)."""
    src_lens, tgt_lens = np.asarray(src_lens), np.asarray(tgt_lens)
    order = np.lexsort((np.arange(len(src_lens)), tgt_lens, src_lens))
    keep = (src_lens[order] <= max_positions) & (tgt_lens[order] <= max_positions)
    dropped = np.sort(order[~keep])
    batches, cur, cur_max = [], [], 0
    for i in order[keep]:
        n = max(src_lens[i], tgt_lens[i])
        if n > max_tokens:
            fail("example %d has %d tokens > --max-tokens %d; raise --max-tokens" % (i, n, max_tokens))
        full = (len(cur) + 1) * max(cur_max, n) > max_tokens or (max_sentences and len(cur) >= max_sentences)
        if cur and full:
            batches.append(np.array(cur))
            cur, cur_max = [], 0
        cur.append(i)
        cur_max = max(cur_max, n)
    if cur:
        batches.append(np.array(cur))
    return batches, dropped


def collate(seqs, pad, move_eos_to_beginning=False, eos=EOS):
    """Right-padded [B, T_max] int64 array (fairseq collate_tokens); with move_eos_to_beginning each
    sequence (ending in eos) is rotated so eos comes first: the decoder input prev_output_tokens."""
    out = np.full((len(seqs), max(len(s) for s in seqs)), pad, dtype=np.int64)
    for r, s in enumerate(seqs):
        if move_eos_to_beginning:
            if s[-1] != eos:
                fail("a target sequence does not end with </s>; re-prepare the data")
            s = np.concatenate([[eos], s[:-1]])
        out[r, :len(s)] = s
    return out


def detokenize(ids, symbols, eos=EOS, pad=PAD):
    """SentencePiece detokenisation of a hypothesis (fairseq --post-process sentencepiece): pieces joined,
    '\u2581' -> space, stripped; stops at eos, skips pad."""
    pieces = []
    for i in ids:
        if i == eos:
            break
        if i != pad:
            pieces.append(symbols[i])
    return "".join(pieces).replace("\u2581", " ").strip()
