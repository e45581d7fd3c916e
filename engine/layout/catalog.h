#pragma once

#include <string>
#include <vector>

namespace railyard::engine {

// Bandwidths: GB/s per direction (1 GB = 1e9 bytes) unless a name says Gbit. Efficiencies are
// the fraction of the line rate that NCCL achieves on that link, kept apart from the line rate so
// a user can see and change either.

struct NvlinkSpec
{
    int generation = 0;
    int links = 0;
    double gbPerS = 0;     // per GPU, per direction, line rate
    double efficiency = 0; // NCCL's achieved fraction (H100: 18 x 20.6 / 450)
};

// What one flash-attention kernel reaches on a GPU (tests/data/kernels/attention.csv): the
// fraction of the BF16 dense peak of its forward and its backward on long sequences, before the
// per-tile costs that short sequences and causal masks add (ComputeModel).
struct AttentionKernelSpec
{
    std::string kernel; // "fa1", "triton", "fa2", "fa3", "cudnn"
    double forward = 0;
    double backward = 0;
    // The kernel's rate at head dimension 64 against 128, same shape (forward, backward): the
    // softmax's work per score does not shrink with the head, the matmuls' does. 0: not
    // measured (the head dimension does not change the rate).
    double forwardHead64 = 0;
    double backwardHead64 = 0;
};

struct GpuSpec
{
    std::string id;
    std::string name;
    std::string architecture; // "ampere", "hopper", "blackwell"
    double bf16Tflops = 0;
    double fp8Tflops = 0;    // 0: no FP8 tensor cores
    double fp4Tflops = 0;    // dense NVFP4 (serving); 0: no FP4 tensor cores
    double hbmGB = 0;        // datasheet capacity, 1e9 bytes
    double hbmUsableGiB = 0; // what the device exposes to programs (an 80 GB H100: 79.6 GiB)
    double hbmTBPerS = 0;
    NvlinkSpec nvlink;
    int nvswitchesPerDomain = 0;
    bool nvls = false;
    double nvlsEfficiency = 0;
    // All-to-all's rate inside an NVLink domain against the NVLink rate the ring collectives
    // reach (nccl-tests alltoall_perf against all_reduce_perf); 1: not measured.
    double nvlinkAllToAllEfficiency = 1;
    // What one NCCL channel of a point-to-point operation moves over NVLink, GB/s: NCCL spreads a
    // send over a number of channels that grows with its size (collectives: p2pChannels()), so
    // below a few hundred MB a send inside a server gets a share of the link; 0: not measured
    // (every send at the link's rate).
    double p2pChannelGBps = 0;
    // NICs of one NVLink domain that carry a collective's traffic to other domains (NCCL's
    // network channels, one head GPU each); 0: every NIC of the domain's members.
    int netHeadsPerDomain = 0;
    int pcieGen = 5;
    double tdpW = 0;
    std::string defaultNic;
    double pricePerGpuHour = 0; // 0: no published price
    // What compute achieves: the sustained fraction of dense peak on large GEMMs (at sustained
    // clocks), of flash attention, and of HBM bandwidth for element-wise kernels.
    int sms = 132;
    double gemmEfficiencyBf16 = 0.75;
    double gemmEfficiencyFp8 = 0.6;
    double attentionEfficiency = 0.5; // a flash kernel with no measured entry below
    double memoryEfficiency = 0.8;
    // Backward element-wise kernels (a norm's backward reduces its weight gradient over the
    // tokens): their fraction of HBM bandwidth; 0 takes memoryEfficiency.
    double memoryEfficiencyBackward = 0;
    // The SM clock a GPU holds through hours of training at its power limit, as a fraction of
    // the clock its short kernel benchmarks ran at (the efficiencies above): tensor-core work
    // runs that much slower in training; HBM's clock does not drop. The clock is the chip's:
    // it depends on what the whole step loads the tensor cores with, so a step whose GEMMs run
    // in FP8 (or FP4) holds sustainedClockFp8 for all its tensor-core work, BF16 attention
    // included; a BF16 step holds sustainedClock.
    double sustainedClock = 1.0;
    double sustainedClockFp8 = 1.0;
    // One small kernel replayed from a CUDA graph, back to back with the next (serving's
    // decode steps): its launch, ramp to HBM bandwidth and tail, in seconds. 0: not measured.
    double graphKernelS = 0;
    // Host (CPU) time of one framework operation launched eagerly on the CPU this GPU ships
    // with (an x86 server's, or Grace on GB200 / GB300): PyTorch's dispatch of a Linear and its
    // cuBLAS launch, in seconds. Eager MoE layers launch one GEMM per local expert, which the
    // host may not keep ahead of (step/hostlaunch.h). 0: not measured.
    double hostOpS = 0;
    // Pinned copies between this GPU and its host's memory, GB/s each way (device to host, host
    // to device): activation offload's rate (step/offload.h). Absent from the catalog: its PCIe
    // generation's x16 rate at the catalog's PCIe efficiency.
    double hostCopyD2hGBs = 0, hostCopyH2dGBs = 0;
    std::vector<AttentionKernelSpec> attentionKernels; // measured kernels
    // The entry for `kernel` ("fa1", "triton", "fa2", "fa3", "cudnn"); nullptr when none was
    // measured.
    const AttentionKernelSpec *attentionKernel(const std::string &kernel) const;
};

// A NIC as NCCL drives it. `fabric` picks the switches; `transport` is the protocol NCCL's
// network plugin speaks, which sets what each network message costs beyond the wire.
struct NicModel
{
    std::string id;
    std::string name;
    std::string fabric;    // "ib" or "ethernet": the switch family
    std::string transport; // "ib", "roce", "efa", "opa", "tcpxo"
    double gbitPerS = 0;
    double efficiency = 0; // achieved fraction of the line rate on large messages
    double latencyUs = 0;  // the NIC's own latency (the link's, shown on the canvas)
    // What one network message (an NCCL step) costs beyond NCCL's own InfiniBand-calibrated
    // tuning model: the transport's host path (libfabric and SRD for EFA, the receive daemon of
    // GPUDirect-TCPXO). 0 for InfiniBand and RoCE, which that model describes.
    double messageUs = 0;
    // Packets of one flow sprayed over every path (EFA's SRD): no ECMP collisions.
    bool multipath = false;
    double gbPerS() const { return gbitPerS / 8.0; }
};

struct PcieSpec
{
    int generation = 0;
    double gbPerS = 0; // x16, per direction
    double efficiency = 0;
};

struct SwitchModel
{
    std::string id;
    std::string name;
    std::string fabric;
    int ports = 0;
    double portGbitPerS = 0;
    bool sharp = false;
    double latencyUs = 0;
};

class Catalog
{
public:
    // The catalog in use: the one compiled into the program (resources/catalog.json) with the
    // user's file on top, when there is one: $RAILYARD_CATALOG, else
    // $XDG_CONFIG_HOME/railyard/catalog.json (~/.config/railyard/catalog.json). Its entries add
    // GPUs, NICs or switches, or replace those with the same id. A broken user file is skipped;
    // userCatalogError() says why.
    static const Catalog &builtin();
    static const Catalog &compiledIn();
    static const std::string &userCatalogPath();  // empty when there is none
    static const std::string &userCatalogError(); // empty when it loaded (or there is none)

    // Parses a catalog document; `file` names it in errors. Throws InputError.
    static Catalog fromJsonText(const std::string &text, const std::string &file);
    // Adds the entries of `other`, replacing those with the same id.
    void merge(const Catalog &other);
    // Adds `gpu`, replacing the one with its id (a what-if on one constant, or a refit of it).
    void setGpu(const GpuSpec &gpu);

    const GpuSpec *gpu(const std::string &id) const;
    const NicModel *nic(const std::string &id) const;
    const PcieSpec *pcie(int generation) const;
    const SwitchModel *switchModel(const std::string &id) const;
    // The NIC model that matches a line rate (and fabric, when given); nullptr if none.
    const NicModel *nicForRate(double gbitPerS, const std::string &fabric = {}) const;
    // The switch for a NIC line rate and fabric: the first with ports at least that fast.
    const SwitchModel *switchForRate(double gbitPerS, const std::string &fabric) const;

    const std::vector<GpuSpec> &gpus() const { return m_gpus; }
    const std::vector<NicModel> &nics() const { return m_nics; }
    const std::vector<PcieSpec> &pcieGenerations() const { return m_pcie; }
    const std::vector<SwitchModel> &switches() const { return m_switches; }

    std::string gpuIdList() const; // "A100-SXM-80GB, H100-SXM, ..." for error messages

private:
    // GPUs the catalog gives no host copy rate: their PCIe generation's.
    void fillHostCopy();
    std::vector<GpuSpec> m_gpus;
    std::vector<NicModel> m_nics;
    std::vector<PcieSpec> m_pcie;
    std::vector<SwitchModel> m_switches;
};

} // namespace railyard::engine
