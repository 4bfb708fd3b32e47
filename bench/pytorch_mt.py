#!/usr/bin/python3
"""PyTorch yardstick for `normlab train mt --config multi30k`: a complete fairseq-style training and
generation run of the same model on the same prepared data, on the CPU.

Model: the Transformer of Vaswani et al. 2017 in fairseq's layout (bench/fairseq_transformer.py):
pre-norm, d_model 256, 4 heads, FFN 1024, 3 encoder + 3 decoder layers, share_all_embeddings, dropout 0.3,
attention_dropout 0.1. Training as fairseq-train: label-smoothed cross-entropy 0.1 (padding ignored,
gradient normalised by target tokens), fairseq's Adam (betas 0.9/0.98, eps 1e-8, weight decay 1e-4
*decoupled* as in AdamW: fairseq/optim/adam.py says "corresponds to the AdamW variant"; here
torch.optim.AdamW), lr 1e-3 with the inverse_sqrt schedule (500 warm-up updates from 1e-7), no gradient
clipping, batches of at most 4096 tokens (padding included) shuffled per epoch, 10 epochs, a checkpoint
per epoch. Then the last 3 epoch checkpoints are averaged (scripts/average_checkpoints.py) and the test
set is translated with fairseq SequenceGenerator's beam search (beam 5, lenpen 1, fairseq-generate's
max_len_a 0 / max_len_b 200), detokenised (SentencePiece: pieces joined, U+2581 -> space) and written one
line per test sentence in the original order. BLEU: the lead scores the hypothesis file with
`normlab data bleu --tokenize 13a`; this script also prints a self-contained re-implementation of
sacreBLEU's 13a corpus BLEU (bench/bleu13a.py).

Data: `normlab data prepare multi30k --data /work/shared/data/multi30k --out DIR` (SentencePiece BPE 8000,
joint dictionary, en-de); pass --data DIR. Differences to fairseq: batches are shuffled with numpy's
RandomState(seed + epoch) (normlab uses mt19937_64), and the (src, tgt) sort has no random tie-break.

    /usr/bin/python3 bench/pytorch_mt.py --data /tmp/m30k --out /tmp/pyref-mt --threads 1
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

import torch_bench as tb
import mt_data


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="folder written by `normlab data prepare multi30k`")
    p.add_argument("--out", required=True, help="folder for checkpoints, hypotheses and result.json")
    p.add_argument("--raw-test-ref", default=None,
                   help="raw (detokenised) test reference, .gz or text; default: "
                        "<summary data folder>/raw/test_2016_flickr.<tgt>.gz")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS threads (default = --threads)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-epoch", type=int, default=10)
    p.add_argument("--max-update", type=int, default=0, help="stop after this many updates (0 = no limit)")
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup-updates", type=int, default=500)
    p.add_argument("--warmup-init-lr", type=float, default=1e-7)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--dropout", type=float, default=0.3)
    p.add_argument("--attention-dropout", type=float, default=0.1)
    p.add_argument("--norm", choices=["layernorm", "layernorm-simple", "none"], default="layernorm")
    p.add_argument("--post-norm", action="store_true", help="post-norm layers instead of pre-norm")
    p.add_argument("--average-last", type=int, default=3, help="epoch checkpoints averaged (0 = last only)")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--lenpen", type=float, default=1.0)
    p.add_argument("--max-len-a", type=float, default=0.0)
    p.add_argument("--max-len-b", type=int, default=200)
    p.add_argument("--gen-batch-size", type=int, default=128, help="sentences per generation batch")
    p.add_argument("--no-generate", action="store_true", help="train (and validate) only")
    p.add_argument("--log-interval", type=int, default=50, help="updates between progress lines")
    a = p.parse_args(argv)
    if min(a.threads, a.max_epoch, a.max_tokens, a.beam, a.gen_batch_size, a.log_interval) < 1 or \
            a.max_update < 0 or a.warmup_updates < 1:
        p.error("--threads, --max-epoch, --max-tokens, --beam, --gen-batch-size, --log-interval and "
                "--warmup-updates must be >= 1, --max-update >= 0")
    return a


def inverse_sqrt_lr(num_updates, a):
    """fairseq inverse_sqrt: linear warm-up from warmup_init_lr to lr over warmup_updates, then
    lr * sqrt(warmup_updates) / sqrt(num_updates)."""
    if num_updates < a.warmup_updates:
        return a.warmup_init_lr + num_updates * (a.lr - a.warmup_init_lr) / a.warmup_updates
    return a.lr * math.sqrt(a.warmup_updates) / math.sqrt(num_updates)


class Batches:
    """Collated tensors of a split: (src, prev_output_tokens, target, target tokens) per planned batch."""

    def __init__(self, torch, src, tgt, max_tokens):
        self.plan, self.dropped = mt_data.plan_batches([len(s) for s in src], [len(t) for t in tgt], max_tokens)
        self.tensors = []
        for idx in self.plan:
            s = torch.from_numpy(mt_data.collate([src[i] for i in idx], mt_data.PAD))
            t = [tgt[i] for i in idx]
            prev = torch.from_numpy(mt_data.collate(t, mt_data.PAD, move_eos_to_beginning=True))
            target = torch.from_numpy(mt_data.collate(t, mt_data.PAD))
            self.tensors.append((s, prev, target, int(target.ne(mt_data.PAD).sum())))


def validate(torch, ft, model, batches, eps):
    """Label-smoothed loss and nll per target token in base 2 (fairseq's reported units)."""
    model.eval()
    loss_sum = nll_sum = ntok = 0.0
    with torch.no_grad():
        for src, prev, target, n in batches.tensors:
            loss, nll = ft.label_smoothed_nll_loss(model(src, prev), target, eps)
            loss_sum, nll_sum, ntok = loss_sum + float(loss), nll_sum + float(nll), ntok + n
    model.train()
    return loss_sum / ntok / math.log(2), nll_sum / ntok / math.log(2)


def average_checkpoints(torch, paths):
    """Element-wise mean of the state dicts in `paths` (fairseq scripts/average_checkpoints.py)."""
    avg = None
    for p in paths:
        sd = torch.load(p, map_location="cpu")["model"]
        if avg is None:
            avg = {k: v.clone().double() for k, v in sd.items()}
        else:
            for k in avg:
                avg[k] += sd[k].double()
    return {k: (v / len(paths)).float() for k, v in avg.items()}


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def translate(torch, model, src_seqs, symbols, a):
    """Beam search over the test sources in batches sorted by length; hypotheses in the original order."""
    from beam_search import generate
    order = sorted(range(len(src_seqs)), key=lambda i: (len(src_seqs[i]), i))
    hyps = [None] * len(src_seqs)
    for b in range(0, len(order), a.gen_batch_size):
        idx = order[b:b + a.gen_batch_size]
        src = torch.from_numpy(mt_data.collate([src_seqs[i] for i in idx], mt_data.PAD))
        for i, (toks, _) in zip(idx, generate(model, src, beam=a.beam, lenpen=a.lenpen, max_len_a=a.max_len_a,
                                              max_len_b=a.max_len_b)):
            hyps[i] = mt_data.detokenize(toks, symbols)
    return hyps


def main(argv=None):
    a = parse_args(argv)
    blas = tb.import_torch(a.threads, a.blas_threads)
    import torch
    import fairseq_transformer as ft

    summary, (sl, tl), symbols, splits = mt_data.load_prepared(a.data)
    ref_path = a.raw_test_ref or os.path.join(summary.get("data", ""), "raw", "test_2016_flickr.%s.gz" % tl)
    if not a.no_generate and not os.path.exists(ref_path):
        mt_data.fail("%s: raw test reference not found; pass --raw-test-ref FILE (e.g. "
                     "/work/shared/data/multi30k/raw/test_2016_flickr.%s.gz)" % (ref_path, tl))
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    cfg = dict(d=256, ffn=1024, heads=4, enc_layers=3, dec_layers=3, vocab=len(symbols), dropout=a.dropout,
               attention_dropout=a.attention_dropout, activation_dropout=0.0, pre_norm=not a.post_norm,
               norm=a.norm, max_positions=1024)
    model = ft.TransformerMT(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=a.warmup_init_lr, betas=(0.9, 0.98), eps=1e-8,
                            weight_decay=a.weight_decay)
    t0 = time.perf_counter()
    train = Batches(torch, *splits["train"], a.max_tokens)
    valid = Batches(torch, *splits["valid"], a.max_tokens)
    n_params = sum(p.numel() for p in model.parameters())
    print("pytorch %s, %d thread(s); %s-%s, vocabulary %d, %d parameters; train %d sentences in %d batches "
          "(max_tokens %d), valid %d; data loaded in %.1f s"
          % (torch.__version__, torch.get_num_threads(), sl, tl, len(symbols), n_params, len(splits["train"][0]),
             len(train.plan), a.max_tokens, len(splits["valid"][0]), time.perf_counter() - t0), flush=True)

    result = {"framework": "pytorch", "version": torch.__version__, "threads": torch.get_num_threads(),
              "blas_threads": blas, "seed": a.seed, "data": os.path.abspath(a.data), "config": cfg,
              "parameters": n_params, "args": vars(a), "epochs": []}
    num_updates, train_time, train_tokens, ckpts = 0, 0.0, 0, []
    import numpy as np
    for epoch in range(1, a.max_epoch + 1):
        model.train()
        perm = np.random.RandomState(a.seed + epoch).permutation(len(train.tensors))
        e_start, e_cpu, e_tokens, e_loss = time.perf_counter(), time.process_time(), 0, 0.0
        log_t, log_tok = e_start, 0
        for k, bi in enumerate(perm):
            src, prev, target, ntok = train.tensors[bi]
            for g in opt.param_groups:
                g["lr"] = inverse_sqrt_lr(num_updates, a)
            opt.zero_grad()
            loss, _ = ft.label_smoothed_nll_loss(model(src, prev), target, a.label_smoothing)
            (loss / ntok).backward()
            opt.step()
            num_updates += 1
            e_tokens, log_tok, e_loss = e_tokens + ntok, log_tok + ntok, e_loss + float(loss)
            if num_updates % a.log_interval == 0:
                now = time.perf_counter()
                print("epoch %d | update %d (%d/%d) | loss %.3f | lr %.3g | %.0f tgt tok/s | %.1f s (CPU %.1f s)"
                      % (epoch, num_updates, k + 1, len(perm), float(loss) / ntok / math.log(2),
                         opt.param_groups[0]["lr"], log_tok / (now - log_t), now - e_start,
                         time.process_time() - e_cpu), flush=True)
                log_t, log_tok = now, 0
            if a.max_update and num_updates >= a.max_update:
                break
        e_time, e_cpu = time.perf_counter() - e_start, time.process_time() - e_cpu
        train_time, train_tokens = train_time + e_time, train_tokens + e_tokens
        v_loss, v_nll = validate(torch, ft, model, valid, a.label_smoothing)
        path = os.path.join(a.out, "checkpoint%d.pt" % epoch)
        torch.save({"model": model.state_dict(), "epoch": epoch, "num_updates": num_updates, "config": cfg}, path)
        ckpts.append(path)
        row = {"epoch": epoch, "num_updates": num_updates, "train_loss": e_loss / e_tokens / math.log(2),
               "valid_loss": v_loss, "valid_nll_loss": v_nll, "valid_ppl": 2 ** v_nll,
               "epoch_time_s": e_time, "epoch_cpu_s": e_cpu, "tgt_tokens_per_s": e_tokens / e_time}
        result["epochs"].append(row)
        print("epoch %d done | %d updates | train loss %.3f | valid loss %.3f | valid nll %.3f | ppl %.2f | "
              "%.1f s (CPU %.1f s) | %.0f tgt tok/s" % (epoch, num_updates, row["train_loss"], v_loss, v_nll,
                                                       row["valid_ppl"], e_time, e_cpu, row["tgt_tokens_per_s"]),
              flush=True)
        if a.max_update and num_updates >= a.max_update:
            break
    result.update(num_updates=num_updates, train_time_s=train_time, tgt_tokens_per_s=train_tokens / train_time,
                  peak_rss_mib=tb.peak_rss_mib())

    if not a.no_generate:
        last = ckpts[-max(1, a.average_last):]
        model.load_state_dict(average_checkpoints(torch, last))
        torch.save({"model": model.state_dict(), "averaged": last, "config": cfg},
                   os.path.join(a.out, "checkpoint_avg.pt"))
        g0 = time.perf_counter()
        hyps = translate(torch, model, splits["test"][0], symbols, a)
        gen_time = time.perf_counter() - g0
        refs = read_lines(ref_path)
        if len(refs) != len(hyps):
            mt_data.fail("%s has %d lines but the prepared test set %d sentences" % (ref_path, len(refs), len(hyps)))
        hyp_file, ref_file = os.path.join(a.out, "hyp.%s.txt" % tl), os.path.join(a.out, "ref.%s.txt" % tl)
        for path, lines in ((hyp_file, hyps), (ref_file, refs)):
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
        from bleu13a import corpus_bleu
        bleu = corpus_bleu(hyps, refs)
        result["generation"] = {"averaged_checkpoints": [os.path.basename(p) for p in last], "beam": a.beam,
                                "lenpen": a.lenpen, "max_len_a": a.max_len_a, "max_len_b": a.max_len_b,
                                "sentences": len(hyps), "time_s": gen_time, "hypotheses": hyp_file,
                                "reference": ref_file, "bleu_python_sacrebleu13a": bleu}
        print("test: %d sentences translated in %.1f s (average of %s) -> %s\n"
              "BLEU (python re-implementation of sacreBLEU 13a, cased) = %.2f  %s  BP %.3f  hyp/ref len %d/%d\n"
              "score with: normlab data bleu --tokenize 13a ... %s %s"
              % (len(hyps), gen_time, ",".join(os.path.basename(p) for p in last), hyp_file, bleu["bleu"],
                 "/".join("%.1f" % p for p in bleu["precisions"]), bleu["bp"], bleu["hyp_len"], bleu["ref_len"],
                 hyp_file, ref_file))
    with open(os.path.join(a.out, "result.json"), "w") as f:
        json.dump(result, f, indent=2)
    print("train time %.1f s, %.0f target tokens/s; written %s" % (train_time, result["tgt_tokens_per_s"],
                                                                   os.path.join(a.out, "result.json")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
