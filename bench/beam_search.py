"""Beam search with fairseq SequenceGenerator semantics (fairseq/sequence_generator.py, search.BeamSearch)
for bench/pytorch_mt.py, on fairseq_transformer.TransformerMT with incremental (cached) decoding.

Semantics kept from fairseq:
  * step 0 expands only the first beam; each step takes the top 2*beam (beam index, token) candidates
    of cumulative log-probabilities;
  * candidates ending in </s> among the first `beam` are finalized with score / len^lenpen
    (len = tokens generated including </s>), at most `beam` finalized per sentence;
  * a sentence is done once it has `beam` finalized hypotheses (or at max_len);
    the next beams are the best `beam` non-</s> candidates;
  * <pad> is never generated; </s> is forbidden before min_len and forced at
    max_len = min(max_len_a * src_len + max_len_b, max_positions - 1), src_len = longest source in the batch;
  * the output is the finalized hypothesis with the best normalized score.
Defaults are fairseq-generate's: beam 5, lenpen 1, max_len_a 0, max_len_b 200, min_len 1, unkpen 0.
"""
import torch

from fairseq_transformer import EOS, PAD, UNK


@torch.no_grad()
def generate(model, src, beam=5, lenpen=1.0, max_len_a=0.0, max_len_b=200, min_len=1, unk_penalty=0.0):
    """src [B, S] (right-padded ids) -> list of B best hypotheses: (token ids ending with </s>, score)."""
    model.eval()
    B, S = src.shape
    src_len = int(src.ne(PAD).sum(1).max())
    max_len = int(min(max_len_a * src_len + max_len_b, model.cfg["max_positions"] - 1))
    enc, enc_mask = model.encoder(src)
    order = torch.arange(B).repeat_interleave(beam)
    enc, enc_mask = enc.index_select(0, order), enc_mask.index_select(0, order)
    caches = [{} for _ in model.decoder.layers]

    tokens = torch.full((B * beam, max_len + 2), PAD, dtype=torch.long)
    tokens[:, 0] = EOS
    scores = torch.zeros(B * beam, max_len + 1)
    finalized = [[] for _ in range(B)]
    finished = [False] * B
    remaining = B
    cand = 2 * beam
    bsz = B
    bbsz_offsets = (torch.arange(B) * beam).unsqueeze(1)
    cand_offsets = torch.arange(cand)
    original = torch.arange(B)  # current batch row -> sentence id
    cands_to_ignore = torch.zeros(B, beam, dtype=torch.bool)
    reorder, batch_idxs = None, None

    for step in range(max_len + 1):
        if reorder is not None:
            if batch_idxs is not None:  # rows of the previous step's layout
                corr = batch_idxs - torch.arange(batch_idxs.numel())
                reorder = (reorder.view(-1, beam) + corr.unsqueeze(1) * beam).view(-1)
                original = original[batch_idxs]
            for c in caches:
                for part in c.values():
                    for key in ("k", "v"):
                        part[key] = part[key].index_select(0, reorder)
            enc, enc_mask = enc.index_select(0, reorder), enc_mask.index_select(0, reorder)
        logits = model.decoder(tokens[:, step:step + 1], enc, enc_mask, caches=caches, start=step)
        lprobs = torch.log_softmax(logits[:, -1, :].float(), dim=-1)
        V = lprobs.size(1)
        lprobs[lprobs != lprobs] = float("-inf")
        lprobs[:, PAD] = float("-inf")
        lprobs[:, UNK] -= unk_penalty
        if step >= max_len:
            lprobs[:, :EOS] = float("-inf")
            lprobs[:, EOS + 1:] = float("-inf")
        if step < min_len:
            lprobs[:, EOS] = float("-inf")

        lp = lprobs.view(bsz, beam, V)
        if step == 0:
            lp = lp[:, ::beam, :].contiguous()
        else:
            lp = lp + scores[:, step - 1].view(bsz, beam, 1)
        flat = lp.view(bsz, -1)
        cand_scores, idx = torch.topk(flat, k=min(cand, flat.size(1) - 1))
        cand_beams, cand_tokens = idx // V, idx % V
        cand_bbsz = cand_beams + bbsz_offsets[:bsz]

        eos_mask = cand_tokens.eq(EOS) & cand_scores.ne(float("-inf"))
        eos_mask[:, :beam][cands_to_ignore] = False
        eos_bbsz = torch.masked_select(cand_bbsz[:, :beam], eos_mask[:, :beam])
        done_rows = []
        if eos_bbsz.numel() > 0:
            eos_scores = torch.masked_select(cand_scores[:, :beam], eos_mask[:, :beam])
            done_rows = _finalize(step, eos_bbsz, eos_scores, tokens, scores, finalized, finished,
                                  original, beam, lenpen, max_len)
            remaining -= len(done_rows)
        if remaining == 0 or step >= max_len:
            break

        if done_rows:
            keep = torch.ones(bsz, dtype=torch.bool)
            keep[done_rows] = False
            batch_idxs = keep.nonzero().squeeze(-1)
            bsz = batch_idxs.numel()
            eos_mask, cand_beams = eos_mask[batch_idxs], cand_beams[batch_idxs]
            cand_bbsz = cand_beams + bbsz_offsets[:bsz]
            cand_scores, cand_tokens = cand_scores[batch_idxs], cand_tokens[batch_idxs]
            cands_to_ignore = cands_to_ignore[batch_idxs]
            scores = scores.view(-1, beam, max_len + 1)[batch_idxs].view(bsz * beam, -1)
            tokens = tokens.view(-1, beam, max_len + 2)[batch_idxs].view(bsz * beam, -1)
        else:
            batch_idxs = None

        # The next beams: the first `beam` candidates that neither end in </s> nor are ignored.
        eos_mask[:, :beam] = ~((~cands_to_ignore) & (~eos_mask[:, :beam]))
        active_mask = eos_mask.long() * cand + cand_offsets[:eos_mask.size(1)]
        new_ignore, active = torch.topk(active_mask, k=beam, dim=1, largest=False)
        cands_to_ignore = new_ignore.ge(cand)[:, :beam]
        active_bbsz = cand_bbsz.gather(1, active).view(-1)
        tokens[:, :step + 1] = tokens.index_select(0, active_bbsz)[:, :step + 1]
        tokens.view(bsz, beam, -1)[:, :, step + 1] = cand_tokens.gather(1, active)
        if step > 0:
            scores[:, :step] = scores.index_select(0, active_bbsz)[:, :step]
        scores.view(bsz, beam, -1)[:, :, step] = cand_scores.gather(1, active)
        reorder = active_bbsz

    best = []
    for hyps in finalized:
        h = max(hyps, key=lambda x: x[1])  # fairseq sorts by score, stable: first of equals wins
        best.append(h)
    return best


def _finalize(step, bbsz_idx, eos_scores, tokens, scores, finalized, finished, original, beam, lenpen,
              max_len):
    """Stores the hypotheses ending in </s> at `step`; returns the current batch rows now done."""
    toks = tokens.index_select(0, bbsz_idx)[:, 1:step + 2].clone()
    toks[:, step] = EOS
    norm = eos_scores / (step + 1) ** lenpen
    touched = []
    for i in range(bbsz_idx.numel()):
        row = int(bbsz_idx[i]) // beam
        sent = int(original[row])
        if len(finalized[sent]) < beam:
            finalized[sent].append((toks[i].tolist(), float(norm[i])))
        if row not in touched:
            touched.append(row)
    done = []
    for row in touched:
        sent = int(original[row])
        if not finished[sent] and (len(finalized[sent]) == beam or step == max_len):
            finished[sent] = True
            done.append(row)
    return done
