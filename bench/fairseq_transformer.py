"""The Transformer of Vaswani et al. 2017 ("Attention is all you need") in plain torch.nn, laid out as
fairseq's `transformer` model (fairseq/models/transformer, fairseq/modules/transformer_layer.py,
multihead_attention.py, sinusoidal_positional_embedding.py), for the PyTorch references in bench/.

Shared by bench/pytorch_transformer.py (step timing) and bench/pytorch_mt.py (training + beam search).
Tensors are batch-first ([B, T, d]); fairseq is time-first internally, which changes no result.

What follows fairseq exactly:
  * embeddings scaled by sqrt(d_model), init N(0, d^-1/2) with the padding row zeroed;
  * sinusoidal positions (sin half, then cos half, not interleaved), positions counted from
    padding_idx + 1 over non-pad tokens (fairseq utils.make_positions), padding positions zero;
  * MultiheadAttention with separate q/k/v/out projections (with bias), q scaled by head_dim^-1/2,
    softmax in float32, attention dropout on the probabilities; xavier_uniform init (gain 1/sqrt 2 for
    q/k/v), out_proj bias zero;
  * layers in pre-norm (normalize_before=True: x + Dropout(Sublayer(LN(x)))) or post-norm, ReLU FFN
    with activation dropout, a final LayerNorm on each stack in pre-norm;
  * output projection tied to the (shared) embedding matrix (share_all_embeddings);
  * label-smoothed cross-entropy of fairseq's label_smoothed_cross_entropy criterion
    (eps_i = eps / (V - 1); loss = (1 - eps - eps_i) * nll + eps_i * smooth), padding ignored, summed.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, BOS, EOS, UNK = 1, 0, 2, 3  # fairseq Dictionary: <s>=0 <pad>=1 </s>=2 <unk>=3


def make_norm(name, d):
    """The normalization layer of each sublayer: `layernorm` (nn.LayerNorm, eps 1e-5 as fairseq),
    `layernorm-simple` (no gain/bias, Xu et al. 2019), or `none` (identity)."""
    if name == "layernorm":
        return nn.LayerNorm(d)
    if name == "layernorm-simple":
        return nn.LayerNorm(d, elementwise_affine=False)
    if name == "none":
        return nn.Identity()
    raise ValueError("unknown norm %r (choose layernorm, layernorm-simple or none)" % name)


def sinusoidal_table(num_positions, d, padding_idx=PAD):
    """fairseq SinusoidalPositionalEmbedding.get_embedding: [num_positions, d]; row p holds
    sin(p * w_i) for i < d/2 then cos(p * w_i), w_i = 10000^(-i / (d/2 - 1)); row padding_idx zero."""
    half = d // 2
    w = torch.exp(torch.arange(half, dtype=torch.float) * -(math.log(10000.0) / (half - 1)))
    ang = torch.arange(num_positions, dtype=torch.float).unsqueeze(1) * w.unsqueeze(0)
    table = torch.cat([torch.sin(ang), torch.cos(ang)], dim=1)
    if d % 2 == 1:
        table = torch.cat([table, torch.zeros(num_positions, 1)], dim=1)
    table[padding_idx, :] = 0
    return table


class SinusoidalPositions(nn.Module):
    """Adds nothing itself: returns the [B, T, d] position embeddings of `tokens` [B, T] (pads -> 0)."""

    def __init__(self, d, max_positions=1024, padding_idx=PAD):
        super().__init__()
        self.padding_idx = padding_idx
        self.register_buffer("table", sinusoidal_table(max_positions + padding_idx + 1, d, padding_idx),
                             persistent=False)

    def forward(self, tokens, start=0):
        """`start` > 0: positions of the last tokens of a longer prefix (incremental decoding,
        no padding in the prefix)."""
        if start > 0:
            pos = torch.arange(start, start + tokens.size(1), device=tokens.device) + self.padding_idx + 1
            return self.table[pos].unsqueeze(0).expand(tokens.size(0), -1, -1)
        mask = tokens.ne(self.padding_idx).long()
        pos = torch.cumsum(mask, dim=1) * mask + self.padding_idx
        return self.table[pos]


class MultiheadAttention(nn.Module):
    """fairseq MultiheadAttention (batch-first). query [B, Tq, d], key/value [B, Tk, d];
    key_padding_mask [B, Tk] bool (True = pad), attn_mask [Tq, Tk] float (-inf = blocked).
    `cache` (a dict, incremental decoding): self-attention appends this step's k/v to cache['k'/'v'];
    with static_kv (encoder-decoder attention) k/v are computed once and reused."""

    def __init__(self, d, heads, dropout=0.0):
        super().__init__()
        if d % heads:
            raise ValueError("d_model %d is not divisible by %d heads" % (d, heads))
        self.h, self.hd, self.dropout = heads, d // heads, dropout
        self.scaling = self.hd ** -0.5
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))
        for lin in (self.q_proj, self.k_proj, self.v_proj):
            nn.init.xavier_uniform_(lin.weight, gain=1 / math.sqrt(2))
        nn.init.xavier_uniform_(self.out_proj.weight)
        nn.init.constant_(self.out_proj.bias, 0.0)

    def _heads(self, x):
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.hd).transpose(1, 2)  # [B, h, T, hd]

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, cache=None,
                static_kv=False):
        q = self._heads(self.q_proj(query) * self.scaling)
        if cache is not None and static_kv and "k" in cache:
            k, v = cache["k"], cache["v"]
        else:
            k, v = self._heads(self.k_proj(key)), self._heads(self.v_proj(value))
            if cache is not None:
                if not static_kv and "k" in cache:
                    k = torch.cat([cache["k"], k], dim=2)
                    v = torch.cat([cache["v"], v], dim=2)
                cache["k"], cache["v"] = k, v
        w = torch.matmul(q, k.transpose(-1, -2))  # [B, h, Tq, Tk]
        if attn_mask is not None:
            w = w + attn_mask
        if key_padding_mask is not None:
            w = w.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        p = F.dropout(F.softmax(w.float(), dim=-1).type_as(w), p=self.dropout, training=self.training)
        out = torch.matmul(p, v).transpose(1, 2).reshape(query.size(0), query.size(1), self.h * self.hd)
        return self.out_proj(out)


class Sublayer(nn.Module):
    """Residual wrapper: pre-norm x + drop(f(LN(x))) or post-norm LN(x + drop(f(x)))."""

    def __init__(self, d, norm, dropout, pre_norm):
        super().__init__()
        self.norm, self.dropout, self.pre_norm = make_norm(norm, d), dropout, pre_norm

    def forward(self, x, f):
        y = f(self.norm(x)) if self.pre_norm else f(x)
        y = x + F.dropout(y, p=self.dropout, training=self.training)
        return y if self.pre_norm else self.norm(y)


class FeedForward(nn.Module):
    """fc2(activation_dropout(ReLU(fc1(x)))); fairseq builds fc1/fc2 with nn.Linear's default init."""

    def __init__(self, d, ffn, activation_dropout):
        super().__init__()
        self.fc1, self.fc2, self.activation_dropout = nn.Linear(d, ffn), nn.Linear(ffn, d), activation_dropout

    def forward(self, x):
        return self.fc2(F.dropout(F.relu(self.fc1(x)), p=self.activation_dropout, training=self.training))


class EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = MultiheadAttention(c["d"], c["heads"], c["attention_dropout"])
        self.ffn = FeedForward(c["d"], c["ffn"], c["activation_dropout"])
        self.attn_sub = Sublayer(c["d"], c["norm"], c["dropout"], c["pre_norm"])
        self.ffn_sub = Sublayer(c["d"], c["norm"], c["dropout"], c["pre_norm"])

    def forward(self, x, pad_mask):
        x = self.attn_sub(x, lambda h: self.self_attn(h, h, h, key_padding_mask=pad_mask))
        return self.ffn_sub(x, self.ffn)


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = MultiheadAttention(c["d"], c["heads"], c["attention_dropout"])
        self.encoder_attn = MultiheadAttention(c["d"], c["heads"], c["attention_dropout"])
        self.ffn = FeedForward(c["d"], c["ffn"], c["activation_dropout"])
        self.self_sub, self.cross_sub, self.ffn_sub = (
            Sublayer(c["d"], c["norm"], c["dropout"], c["pre_norm"]) for _ in range(3))

    def forward(self, x, enc, enc_mask, self_mask, self_pad_mask, cache=None):
        sc = cc = None
        if cache is not None:
            sc, cc = cache.setdefault("self", {}), cache.setdefault("cross", {})
        x = self.self_sub(x, lambda h: self.self_attn(h, h, h, key_padding_mask=self_pad_mask,
                                                      attn_mask=self_mask, cache=sc))
        x = self.cross_sub(x, lambda h: self.encoder_attn(h, enc, enc, key_padding_mask=enc_mask,
                                                          cache=cc, static_kv=True))
        return self.ffn_sub(x, self.ffn)


def make_embedding(vocab, d, padding_idx=PAD):
    """fairseq transformer Embedding: N(0, d^-1/2), padding row zero."""
    emb = nn.Embedding(vocab, d, padding_idx=padding_idx)
    nn.init.normal_(emb.weight, mean=0.0, std=d ** -0.5)
    nn.init.constant_(emb.weight[padding_idx], 0.0)
    return emb


class Encoder(nn.Module):
    """fairseq TransformerEncoder: tokens [B, S] -> (states [B, S, d], pad mask [B, S])."""

    def __init__(self, c, embed):
        super().__init__()
        self.embed, self.scale, self.dropout = embed, math.sqrt(c["d"]), c["dropout"]
        self.positions = SinusoidalPositions(c["d"], c["max_positions"])
        self.layers = nn.ModuleList(EncoderLayer(c) for _ in range(c["enc_layers"]))
        self.final_norm = make_norm(c["norm"], c["d"]) if c["pre_norm"] else nn.Identity()

    def forward(self, tokens):
        pad_mask = tokens.eq(PAD)
        x = self.scale * self.embed(tokens) + self.positions(tokens)
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = x.masked_fill(pad_mask.unsqueeze(-1), 0.0)  # fairseq zeroes padded states
        for layer in self.layers:
            x = layer(x, pad_mask if pad_mask.any() else None)
        return self.final_norm(x), pad_mask


class Decoder(nn.Module):
    """fairseq TransformerDecoder with the output projection tied to the embedding.
    forward: prev_output_tokens [B, T] -> logits [B, T, V]."""

    def __init__(self, c, embed):
        super().__init__()
        self.embed, self.scale, self.dropout = embed, math.sqrt(c["d"]), c["dropout"]
        self.positions = SinusoidalPositions(c["d"], c["max_positions"])
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c["dec_layers"]))
        self.final_norm = make_norm(c["norm"], c["d"]) if c["pre_norm"] else nn.Identity()

    def forward(self, prev, enc, enc_mask, caches=None, start=0):
        """`caches` (list of dicts, one per layer): incremental decoding of prev = the last token(s)
        of a prefix starting at position `start`."""
        x = self.scale * self.embed(prev) + self.positions(prev, start)
        x = F.dropout(x, p=self.dropout, training=self.training)
        T = prev.size(1)
        self_mask = None
        if caches is None and T > 1:
            self_mask = torch.triu(torch.full((T, T), float("-inf"), device=prev.device), 1)
        self_pad = prev.eq(PAD) if caches is None and prev.eq(PAD).any() else None
        enc_mask = enc_mask if enc_mask is not None and enc_mask.any() else None
        for i, layer in enumerate(self.layers):
            x = layer(x, enc, enc_mask, self_mask, self_pad, None if caches is None else caches[i])
        return F.linear(self.final_norm(x), self.embed.weight)


CONFIG_KEYS = ("d", "ffn", "heads", "enc_layers", "dec_layers", "vocab", "dropout", "attention_dropout",
               "activation_dropout", "pre_norm", "norm", "max_positions")


class TransformerMT(nn.Module):
    """Encoder-decoder with share_all_embeddings: one [V, d] matrix for source, target and output."""

    def __init__(self, c):
        super().__init__()
        missing = [k for k in CONFIG_KEYS if k not in c]
        if missing:
            raise ValueError("transformer config lacks %s" % ", ".join(missing))
        self.cfg = dict(c)
        self.embed = make_embedding(c["vocab"], c["d"])
        self.encoder, self.decoder = Encoder(c, self.embed), Decoder(c, self.embed)

    def forward(self, src, prev):
        enc, enc_mask = self.encoder(src)
        return self.decoder(prev, enc, enc_mask)


class TransformerClassifier(nn.Module):
    """A fairseq-style Transformer encoder (no decoder layers), then the mean of the final states over
    non-pad tokens, then Linear(d, classes). tokens [B, T] -> logits [B, classes]."""

    def __init__(self, c):
        super().__init__()
        self.cfg = dict(c)
        self.encoder = Encoder(c, make_embedding(c["vocab"], c["d"]))
        self.head = nn.Linear(c["d"], c["classes"])

    def forward(self, tokens):
        x, pad = self.encoder(tokens)
        keep = (~pad).unsqueeze(-1).type_as(x)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        return self.head(F.dropout(pooled, p=self.cfg["dropout"], training=self.training))


def label_smoothed_nll_loss(logits, target, eps, ignore_index=PAD):
    """fairseq label_smoothed_nll_loss on logits [..., V], target [...]: returns (loss, nll_loss),
    both summed over non-ignored positions (natural log). eps_i = eps / (V - 1)."""
    lprobs = F.log_softmax(logits.float(), dim=-1).view(-1, logits.size(-1))
    target = target.reshape(-1, 1)
    nll = -lprobs.gather(dim=-1, index=target)
    smooth = -lprobs.sum(dim=-1, keepdim=True)
    pad = target.eq(ignore_index)
    nll, smooth = nll.masked_fill(pad, 0.0).sum(), smooth.masked_fill(pad, 0.0).sum()
    eps_i = eps / (lprobs.size(-1) - 1)
    return (1.0 - eps - eps_i) * nll + eps_i * smooth, nll


def forward_flops_mt(c, batch, src_len, tgt_len):
    """Multiply-add FLOPs (2 per MAC) of the matrix products of one forward pass of TransformerMT on
    [batch, src_len] / [batch, tgt_len] (projections, attention scores and mixing, FFN, output
    projection); elementwise work (norms, softmax, dropout) is left out."""
    d, f, V = c["d"], c["ffn"], c["vocab"]
    ns, nt = batch * src_len, batch * tgt_len
    enc = 4 * ns * d * d + 2 * ns * d * f + 2 * batch * src_len * src_len * d
    dec_self = 4 * nt * d * d + 2 * batch * tgt_len * tgt_len * d
    dec_cross = 2 * nt * d * d + 2 * ns * d * d + 2 * batch * tgt_len * src_len * d
    dec = dec_self + dec_cross + 2 * nt * d * f
    return 2 * (c["enc_layers"] * enc + c["dec_layers"] * dec + nt * d * V)


def forward_flops_cls(c, batch, seq_len):
    """As forward_flops_mt for TransformerClassifier (encoder + the class head)."""
    d, f = c["d"], c["ffn"]
    n = batch * seq_len
    enc = 4 * n * d * d + 2 * n * d * f + 2 * batch * seq_len * seq_len * d
    return 2 * (c["enc_layers"] * enc + batch * d * c["classes"])
