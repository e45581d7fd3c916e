#pragma once

#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

// A transformer's dimensions, resolved from a preset and the user's overrides.
struct ModelDims
{
    std::string name;
    int layers = 0;
    int hidden = 0;
    int ffn = 0; // dense MLP width
    int heads = 0;
    int kvHeads = 0; // GQA: fewer key/value heads than query heads
    int headDim = 0; // default hidden / heads
    int vocab = 0;
    bool gatedMlp = true; // SwiGLU-style: three FFN matrices instead of two
    // Dropout after attention and MLP (GPT-3 and Megatron's GPT models: 0.1); Llama-style
    // models train without, which saves the masks' activation memory.
    bool dropout = false;
    // LayerNorm (GPT-style: mean and variance; PyTorch runs F.layer_norm as one kernel) or
    // RMSNorm (Llama-style; PyTorch's own is several kernels unless compiled).
    bool layerNorm = false;
    // Rotary position embedding on queries and keys (Llama-style), or positions added to the
    // embedding once (GPT-3, OPT, MPT's learned positions; ALiBi's bias inside the kernel).
    bool rotary = true;
    // Mixture of experts (experts == 0: dense).
    int experts = 0;
    int topK = 0;
    int expertFfn = 0;
    int sharedExperts = 0;
    int moeLayers = 0; // the last `moeLayers` layers are MoE, the first ones dense
    // Multi-head latent attention (DeepSeek); 0 = ordinary attention.
    int qLoraRank = 0;
    int kvLoraRank = 0;
    int qkRopeDim = 0;
    int vHeadDim = 0;
    // Sliding-window attention (gpt-oss alternates sliding and full layers): `slidingLayers`
    // layers attend to at most `slidingWindow` earlier tokens; 0 = none.
    int slidingWindow = 0;
    int slidingLayers = 0;
    // Operations beyond Llama's (gpt-oss): the GLU's two halves clamped at +-gluClamp before
    // the activation (swiglu_limit; 0: none), biases on the linear layers, and the rotary
    // embedding scaled by YaRN. What they cost depends on the stack
    // (StackProfile::unfusedModelExtras).
    double gluClamp = 0;
    bool linearBias = false;
    bool yarnRope = false;

    bool isMla() const { return kvLoraRank > 0; }
    bool isMoe() const { return experts > 0 && moeLayers > 0; }
    // The value dimension of one head (MLA's v_head_dim, else head_dim).
    int valueHeadDim() const { return vHeadDim > 0 ? vHeadDim : headDim; }
    int denseLayers() const { return layers - (isMoe() ? moeLayers : 0); }
    // Parameter counts (embedding and output layer included, untied).
    double totalParams() const;
    double activeParams() const; // per token: top-k experts plus shared experts
    double attentionParamsPerLayer() const;
    double mlpParamsPerLayer(int width) const;
    // One layer's parameters by kind, as the memory and data-parallel accounts split them.
    struct LayerParams
    {
        double attention = 0;
        double denseMlp = 0;  // a dense layer's MLP
        double sharedMlp = 0; // an MoE layer's shared experts and router
        double expertMlp = 0; // an MoE layer's routed experts, all of them
        double embedding = 0; // one embedding (or output) matrix
    };
    LayerParams layerParams() const;
    // Weight tensors of one layer as Megatron builds it (fused QKV; GPT-style layers have
    // biases and LayerNorm's two vectors per norm): what a per-tensor ZeRO-3 gathers one by one.
    int weightTensorsPerLayer() const { return gatedMlp ? 6 : 12; }

    bool operator==(const ModelDims &) const = default;
};

// Partial MoE settings: a preset's values stand where these are unset.
struct MoeOverrides
{
    std::optional<int> experts, topK, expertFfn, sharedExperts, moeLayers;
    bool operator==(const MoeOverrides &) const = default;
};

// Partial multi-head latent attention settings (`model.mla`); qk_nope_head_dim is head_dim.
struct MlaOverrides
{
    std::optional<int> qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim;
    bool operator==(const MlaOverrides &) const = default;
};

// Partial sliding-window settings (`model.sliding_window`).
struct SlidingWindowOverrides
{
    std::optional<int> window, layers;
    bool operator==(const SlidingWindowOverrides &) const = default;
};

// What the layout file says about the model: a preset, dimensions, or a preset with overrides.
struct ModelConfig
{
    std::string preset;
    std::optional<int> layers, hidden, ffn, heads, kvHeads, headDim, vocab;
    std::optional<bool> gatedMlp;
    std::optional<MoeOverrides> moe;
    std::optional<MlaOverrides> mla;
    std::optional<SlidingWindowOverrides> slidingWindow;
    std::optional<double> gluClamp; // "glu_clamp"
    std::optional<bool> linearBias; // "linear_bias"
    std::optional<bool> yarnRope;   // "rope_scaling": "yarn" (true) or "none"
    std::optional<bool> layerNorm;  // "norm": "layernorm" (true) or "rmsnorm"
    std::optional<bool> rotary;     // "position": "rope" (true) or "learned"
    std::optional<bool> dropout;    // "dropout"
    bool operator==(const ModelConfig &) const = default;
};

const std::vector<ModelDims> &modelPresets();
const ModelDims *findModelPreset(const std::string &name);
std::string modelPresetList(); // "gpt3-175b, llama2-7b, ..." for messages

// Applies the overrides to the preset (or to nothing, for explicit dimensions). Returns an error
// text naming the missing or inconsistent dimension, or the dimensions.
struct ResolvedModel
{
    ModelDims dims;
    std::string error; // empty when dims are usable
};
ResolvedModel resolveModel(const ModelConfig &config);

// `dims` written out as a custom model (no preset): every dimension and feature a layout can
// say, so that resolving it gives `dims` back (the name aside, and dropout, which follows the
// MLP's kind in a custom model).
ModelConfig customModelConfig(const ModelDims &dims);

} // namespace railyard::engine
