#include "layout/transformer.h"

namespace railyard::engine {

namespace {

// What the MLP's kind brings: GPT-style models (a GeLU MLP) train with dropout, LayerNorm and
// learned positions; gated (SwiGLU) ones without dropout, with RMSNorm and RoPE.
void applyMlpStyle(ModelDims &m)
{
    m.dropout = !m.gatedMlp;
    m.layerNorm = !m.gatedMlp;
    m.rotary = m.gatedMlp;
}

ModelDims dense(const char *name,
                int layers,
                int hidden,
                int ffn,
                int heads,
                int kvHeads,
                int vocab,
                bool gated,
                int headDim = 0)
{
    ModelDims m;
    m.name = name;
    m.layers = layers;
    m.hidden = hidden;
    m.ffn = ffn;
    m.heads = heads;
    m.kvHeads = kvHeads;
    m.headDim = headDim ? headDim : hidden / heads;
    m.vocab = vocab;
    m.gatedMlp = gated;
    applyMlpStyle(m);
    return m;
}

ModelDims moe(ModelDims m, int experts, int topK, int expertFfn, int shared, int moeLayers)
{
    m.experts = experts;
    m.topK = topK;
    m.expertFfn = expertFfn;
    m.sharedExperts = shared;
    m.moeLayers = moeLayers;
    return m;
}

std::vector<ModelDims> buildPresets()
{
    std::vector<ModelDims> p;
    // Sources: shared/reference/throughput.md section 1 (NeMo configs, model papers, HF configs).
    p.push_back(dense("gpt3-5b", 24, 4096, 16384, 32, 32, 51200, false));
    p.push_back(dense("gpt3-20b", 44, 6144, 24576, 48, 48, 51200, false));
    p.push_back(dense("gpt3-175b", 96, 12288, 49152, 96, 96, 51200, false));
    p.push_back(dense("k-22b", 48, 6144, 24576, 64, 64, 51200, false)); // Korthikanti T3
    p.push_back(dense("mt-nlg-530b", 105, 20480, 81920, 128, 128, 51200, false));
    p.push_back(dense("k-1t", 128, 25600, 102400, 160, 160, 51200, false));
    p.push_back(dense("llama2-7b", 32, 4096, 11008, 32, 32, 32000, true));
    p.push_back(dense("llama2-13b", 40, 5120, 13824, 40, 40, 32000, true));
    p.push_back(dense("llama2-70b", 80, 8192, 28672, 64, 8, 32000, true));
    p.push_back(dense("llama3-8b", 32, 4096, 14336, 32, 8, 128256, true));
    p.push_back(dense("llama3-70b", 80, 8192, 28672, 64, 8, 128256, true));
    // Llama 3.1 and 3.3 70B and Llama 3.1 8B keep Llama 3's dimensions (their HF config.json:
    // huggingface.co/meta-llama/Llama-3.1-70B, Llama-3.3-70B-Instruct, Llama-3.1-8B).
    p.push_back(dense("llama3.1-70b", 80, 8192, 28672, 64, 8, 128256, true));
    p.push_back(dense("llama3.3-70b", 80, 8192, 28672, 64, 8, 128256, true));
    p.push_back(dense("llama3.1-8b", 32, 4096, 14336, 32, 8, 128256, true));
    p.push_back(dense("llama3.1-405b", 126, 16384, 53248, 128, 8, 128256, true));
    p.push_back(dense("nemotron4-340b", 96, 18432, 73728, 96, 8, 256000, false));
    p.back().dropout = false; // squared-ReLU MLP, trained without dropout (NeMo's config)
    p.back().rotary = true;   // with RoPE and LayerNorm (arXiv 2402.16819, section 2.2)
    p.push_back(moe(dense("mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, true), 8, 2, 14336, 0, 32));
    p.push_back(
            moe(dense("mixtral-8x22b", 56, 6144, 16384, 48, 8, 32768, true), 8, 2, 16384, 0, 56));
    // 61 layers: 3 dense + 58 MoE; MLA attention (q LoRA 1536, kv LoRA 512, qk nope 128 (the
    // head_dim), rope 64, v 128): huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json
    // (first_k_dense_replace 3, n_routed_experts 256, num_experts_per_tok 8, n_shared_experts
    // 1, moe_intermediate_size 2048). DeepSeek-R1 has the same architecture (its config.json).
    for (const char *name : {"deepseek-v3", "deepseek-r1"}) {
        ModelDims d = moe(dense(name, 61, 7168, 18432, 128, 128, 129280, true, 128),
                          256,
                          8,
                          2048,
                          1,
                          58);
        d.qLoraRank = 1536;
        d.kvLoraRank = 512;
        d.qkRopeDim = 64;
        d.vHeadDim = 128;
        p.push_back(d);
    }
    p.push_back(moe(dense("qwen3-235b-a22b", 94, 4096, 12288, 64, 4, 151936, true, 128),
                    128,
                    8,
                    1536,
                    0,
                    94));
    // gpt-oss (huggingface.co/openai/gpt-oss-120b and gpt-oss-20b, config.json): every layer MoE
    // (128 or 32 experts, 4 per token, intermediate_size 2880), 64 query heads and 8 KV heads of
    // head_dim 64, layer_types alternating sliding_attention (sliding_window 128) and
    // full_attention, vocab 201088.
    {
        ModelDims d = moe(dense("gpt-oss-120b", 36, 2880, 2880, 64, 8, 201088, true, 64),
                          128,
                          4,
                          2880,
                          0,
                          36);
        // config.json: "swiglu_limit": 7.0, "rope_scaling": {"rope_type": "yarn", "factor":
        // 32.0}; biases on the attention's and the experts' projections (modeling_gpt_oss.py).
        d.slidingWindow = 128;
        d.slidingLayers = 18;
        d.gluClamp = 7.0;
        d.linearBias = true;
        d.yarnRope = true;
        p.push_back(d);
        d = moe(dense("gpt-oss-20b", 24, 2880, 2880, 64, 8, 201088, true, 64), 32, 4, 2880, 0, 24);
        d.slidingWindow = 128;
        d.slidingLayers = 12;
        d.gluClamp = 7.0;
        d.linearBias = true;
        d.yarnRope = true;
        p.push_back(d);
    }
    p.push_back(moe(dense("qwen3-30b-a3b", 48, 2048, 6144, 32, 4, 151936, true, 128),
                    128,
                    8,
                    768,
                    0,
                    48));
    return p;
}

} // namespace

double ModelDims::attentionParamsPerLayer() const
{
    if (qLoraRank > 0 || kvLoraRank > 0) {
        const double qkHead = headDim + qkRopeDim;
        const double q = double(hidden) * qLoraRank + double(qLoraRank) * heads * qkHead;
        const double kv = double(hidden) * (kvLoraRank + qkRopeDim)
                          + double(kvLoraRank) * heads * (headDim + vHeadDim);
        const double o = double(heads) * vHeadDim * hidden;
        return q + kv + o;
    }
    const double q = double(hidden) * heads * headDim;
    const double kv = 2.0 * hidden * kvHeads * headDim;
    const double o = double(heads) * headDim * hidden;
    return q + kv + o;
}

double ModelDims::mlpParamsPerLayer(int width) const
{
    return (gatedMlp ? 3.0 : 2.0) * hidden * width;
}

ModelDims::LayerParams ModelDims::layerParams() const
{
    LayerParams p;
    p.attention = attentionParamsPerLayer();
    p.denseMlp = mlpParamsPerLayer(ffn);
    p.sharedMlp = isMoe() ? mlpParamsPerLayer(expertFfn) * sharedExperts + double(hidden) * experts
                          : 0;
    p.expertMlp = isMoe() ? mlpParamsPerLayer(expertFfn) * experts : 0;
    p.embedding = double(vocab) * hidden;
    return p;
}

double ModelDims::totalParams() const
{
    const double embed = 2.0 * vocab * hidden;
    const double attn = attentionParamsPerLayer() * layers;
    const double denseMlp = mlpParamsPerLayer(ffn) * denseLayers();
    const double moeMlp = isMoe() ? mlpParamsPerLayer(expertFfn) * (experts + sharedExperts)
                                            * moeLayers
                                  : 0.0;
    return embed + attn + denseMlp + moeMlp;
}

double ModelDims::activeParams() const
{
    const double embed = 2.0 * vocab * hidden;
    const double attn = attentionParamsPerLayer() * layers;
    const double denseMlp = mlpParamsPerLayer(ffn) * denseLayers();
    const double moeMlp = isMoe() ? mlpParamsPerLayer(expertFfn) * (topK + sharedExperts)
                                            * moeLayers
                                  : 0.0;
    return embed + attn + denseMlp + moeMlp;
}

const std::vector<ModelDims> &modelPresets()
{
    static const std::vector<ModelDims> presets = buildPresets();
    return presets;
}

const ModelDims *findModelPreset(const std::string &name)
{
    for (const auto &m : modelPresets())
        if (m.name == name)
            return &m;
    return nullptr;
}

std::string modelPresetList()
{
    std::string s;
    for (const auto &m : modelPresets())
        s += (s.empty() ? "" : ", ") + m.name;
    return s;
}

ModelConfig customModelConfig(const ModelDims &d)
{
    ModelConfig m;
    m.layers = d.layers;
    m.hidden = d.hidden;
    m.ffn = d.ffn;
    m.heads = d.heads;
    m.kvHeads = d.kvHeads;
    m.headDim = d.headDim;
    m.vocab = d.vocab;
    m.gatedMlp = d.gatedMlp;
    if (d.experts > 0) {
        MoeOverrides moe;
        moe.experts = d.experts;
        moe.topK = d.topK;
        moe.expertFfn = d.expertFfn;
        moe.sharedExperts = d.sharedExperts;
        moe.moeLayers = d.moeLayers;
        m.moe = moe;
    }
    if (d.isMla()) {
        MlaOverrides mla;
        mla.qLoraRank = d.qLoraRank;
        mla.kvLoraRank = d.kvLoraRank;
        mla.qkNopeHeadDim = d.headDim;
        mla.qkRopeHeadDim = d.qkRopeDim;
        mla.vHeadDim = d.vHeadDim;
        m.mla = mla;
    }
    if (d.slidingWindow > 0) {
        SlidingWindowOverrides sw;
        sw.window = d.slidingWindow;
        sw.layers = d.slidingLayers;
        m.slidingWindow = sw;
    }
    if (d.gluClamp > 0)
        m.gluClamp = d.gluClamp;
    if (d.linearBias)
        m.linearBias = true;
    if (d.yarnRope)
        m.yarnRope = true;
    // The norm, the positions and dropout where they differ from what an MLP of this kind
    // brings (applyMlpStyle, as resolveModel applies it).
    ModelDims style;
    style.gatedMlp = d.gatedMlp;
    applyMlpStyle(style);
    if (d.layerNorm != style.layerNorm)
        m.layerNorm = d.layerNorm;
    if (d.rotary != style.rotary)
        m.rotary = d.rotary;
    if (d.dropout != style.dropout)
        m.dropout = d.dropout;
    return m;
}

ResolvedModel resolveModel(const ModelConfig &c)
{
    ResolvedModel r;
    ModelDims &m = r.dims;
    if (!c.preset.empty()) {
        const ModelDims *p = findModelPreset(c.preset);
        if (!p) {
            r.error = "unknown model preset \"" + c.preset + "\" (known: " + modelPresetList()
                      + ")";
            return r;
        }
        m = *p;
    } else {
        m.name = "custom";
        m.kvHeads = 0;
    }
    const auto apply = [](auto &field, const auto &v) {
        if (v)
            field = *v;
    };
    apply(m.layers, c.layers);
    apply(m.hidden, c.hidden);
    apply(m.ffn, c.ffn);
    apply(m.heads, c.heads);
    apply(m.kvHeads, c.kvHeads);
    apply(m.vocab, c.vocab);
    if (c.gatedMlp)
        m.gatedMlp = *c.gatedMlp;
    if (c.preset.empty() || c.gatedMlp)
        applyMlpStyle(m);
    apply(m.dropout, c.dropout);
    apply(m.layerNorm, c.layerNorm);
    apply(m.rotary, c.rotary);
    if (c.headDim)
        m.headDim = *c.headDim;
    else if (c.preset.empty() || c.hidden || c.heads)
        m.headDim = m.heads > 0 ? m.hidden / m.heads : 0;
    if (m.kvHeads == 0)
        m.kvHeads = m.heads;
    if (c.moe) {
        apply(m.experts, c.moe->experts);
        apply(m.topK, c.moe->topK);
        apply(m.expertFfn, c.moe->expertFfn);
        apply(m.sharedExperts, c.moe->sharedExperts);
        if (c.moe->moeLayers)
            m.moeLayers = *c.moe->moeLayers;
        else if (m.experts > 0 && m.moeLayers == 0)
            m.moeLayers = m.layers;
    }
    if (c.mla) {
        apply(m.qLoraRank, c.mla->qLoraRank);
        apply(m.kvLoraRank, c.mla->kvLoraRank);
        apply(m.headDim, c.mla->qkNopeHeadDim);
        apply(m.qkRopeDim, c.mla->qkRopeHeadDim);
        apply(m.vHeadDim, c.mla->vHeadDim);
    }
    if (c.slidingWindow) {
        apply(m.slidingWindow, c.slidingWindow->window);
        apply(m.slidingLayers, c.slidingWindow->layers);
        if (c.slidingWindow->window && !c.slidingWindow->layers && m.slidingLayers == 0)
            m.slidingLayers = m.layers;
    }
    apply(m.gluClamp, c.gluClamp);
    apply(m.linearBias, c.linearBias);
    apply(m.yarnRope, c.yarnRope);
    if (!c.preset.empty() && (c.layers || c.hidden || c.ffn || c.heads || c.kvHeads || c.vocab))
        m.name = c.preset + " (modified)";

    const auto missing = [&](const char *key) {
        r.error = "model: \"" + std::string(key)
                  + "\" is required when no preset gives it (presets: " + modelPresetList() + ")";
    };
    if (m.layers <= 0)
        missing("layers");
    else if (m.hidden <= 0)
        missing("hidden");
    else if (m.heads <= 0)
        missing("heads");
    else if (m.ffn <= 0 && m.denseLayers() > 0)
        missing("ffn");
    else if (m.vocab <= 0)
        missing("vocab");
    else if (m.heads % m.kvHeads != 0)
        r.error = "model: kv_heads (" + std::to_string(m.kvHeads) + ") must divide heads ("
                  + std::to_string(m.heads) + ")";
    else if (m.experts > 0 && (m.topK <= 0 || m.topK > m.experts))
        r.error = "model: moe.top_k (" + std::to_string(m.topK) + ") must be from 1 to experts ("
                  + std::to_string(m.experts) + ")";
    else if (m.experts > 0 && m.expertFfn <= 0)
        r.error = "model: moe.expert_ffn is required for a mixture-of-experts model";
    else if (m.moeLayers > m.layers)
        r.error = "model: moe.moe_layers (" + std::to_string(m.moeLayers)
                  + ") is more than layers (" + std::to_string(m.layers) + ")";
    else if (m.slidingLayers > m.layers)
        r.error = "model: sliding_window.layers (" + std::to_string(m.slidingLayers)
                  + ") is more than layers (" + std::to_string(m.layers) + ")";
    else if (m.slidingLayers > 0 && m.slidingWindow <= 0)
        r.error = "model: sliding_window.window is required when sliding_window.layers is set";
    else if ((m.qLoraRank > 0 || m.vHeadDim > 0 || m.qkRopeDim > 0) && m.kvLoraRank <= 0)
        r.error = "model: mla.kv_lora_rank is required for multi-head latent attention";
    else if (m.isMla() && (m.qkRopeDim <= 0 || m.vHeadDim <= 0))
        r.error = "model: mla needs qk_rope_head_dim and v_head_dim (DeepSeek-V3: 64 and 128)";
    return r;
}

} // namespace railyard::engine
