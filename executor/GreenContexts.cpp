#include "executor/GreenContexts.h"

#include <string>

#ifdef MARIO_HAVE_CUDA_DRIVER
#include <cuda.h>
#include <dlfcn.h>
#endif

namespace mario::exec {

#ifdef MARIO_HAVE_CUDA_DRIVER

// Entry points by their cuda.h types; resolved by name, so that nothing links libcuda.
struct GreenContexts::Driver {
    decltype(&::cuInit) init = nullptr;
    decltype(&::cuDriverGetVersion) version = nullptr;
    decltype(&::cuGetErrorString) errorString = nullptr;
    decltype(&::cuDeviceGet) deviceGet = nullptr;
    decltype(&::cuDeviceGetAttribute) attribute = nullptr;
    decltype(&::cuDeviceGetDevResource) deviceResource = nullptr;
    decltype(&::cuDevSmResourceSplitByCount) split = nullptr;
    decltype(&::cuDevResourceGenerateDesc) describe = nullptr;
    decltype(&::cuGreenCtxCreate) createContext = nullptr;
    decltype(&::cuGreenCtxDestroy) destroyContext = nullptr;
    decltype(&::cuGreenCtxStreamCreate) createStream = nullptr;
    decltype(&::cuStreamDestroy) destroyStream = nullptr;
    int driverVersion = 0;
};

namespace {

template <class Fn>
bool resolve(void* library, const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(library, name));
    return fn != nullptr;
}

std::string driverVersionText(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Loaded once per process; the library stays loaded (the contexts live until exit at most).
Result<const GreenContexts::Driver*> loadDriver() {
    static const Result<GreenContexts::Driver> loaded = []() -> Result<GreenContexts::Driver> {
        void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            const char* why = dlerror();
            return makeError("SM partitions need the CUDA driver, and this machine has none (libcuda.so.1: " +
                             std::string(why ? why : "not found") + ")");
        }
        GreenContexts::Driver d;
        if (!resolve(library, "cuInit", d.init) || !resolve(library, "cuDriverGetVersion", d.version) ||
            !resolve(library, "cuGetErrorString", d.errorString) || !resolve(library, "cuDeviceGet", d.deviceGet) ||
            !resolve(library, "cuDeviceGetAttribute", d.attribute))
            return makeError("libcuda.so.1 lacks the CUDA driver's basic entry points; is it a real CUDA driver?");
        d.version(&d.driverVersion);
        // Green contexts came with CUDA 12.4's driver; an older one has none of these.
        if (!resolve(library, "cuDeviceGetDevResource", d.deviceResource) ||
            !resolve(library, "cuDevSmResourceSplitByCount", d.split) ||
            !resolve(library, "cuDevResourceGenerateDesc", d.describe) ||
            !resolve(library, "cuGreenCtxCreate", d.createContext) ||
            !resolve(library, "cuGreenCtxDestroy", d.destroyContext) ||
            !resolve(library, "cuGreenCtxStreamCreate", d.createStream) ||
            !resolve(library, "cuStreamDestroy_v2", d.destroyStream))
            return makeError("the CUDA driver here (" + driverVersionText(d.driverVersion) +
                             ") cannot partition SMs: green contexts need a CUDA 12.4 driver or newer");
        return d;
    }();
    if (!loaded) return loaded.error();
    return &*loaded;
}

// The split rules as the driver reports them (CUDA 13 headers); headers or drivers that do not
// report them get the documented rules of the GPU's compute capability (SmPartitionPlan.h).
template <class Sm>
SmResources rulesOf(const Sm& sm, int computeMajor) {
    const int count = static_cast<int>(sm.smCount);
    if constexpr (requires { sm.minSmPartitionSize, sm.smCoscheduledAlignment; }) {
        if (sm.minSmPartitionSize > 0 && sm.smCoscheduledAlignment > 0)
            return SmResources{count, static_cast<int>(sm.minSmPartitionSize),
                               static_cast<int>(sm.smCoscheduledAlignment)};
    }
    return smRulesForComputeCapability(computeMajor, count);
}

}  // namespace

Result<std::unique_ptr<GreenContexts>> GreenContexts::create(int cudaDevice, int partitions) {
    auto driver = loadDriver();
    if (!driver) return driver.error();
    const Driver& d = **driver;
    auto failed = [&d](CUresult result, const std::string& call) {
        const char* text = nullptr;
        d.errorString(result, &text);
        return makeError(call + " failed: " + (text ? text : "error " + std::to_string(static_cast<int>(result))) +
                         " (CUDA driver " + driverVersionText(d.driverVersion) + ")");
    };
    if (CUresult r = d.init(0); r != CUDA_SUCCESS) return failed(r, "cuInit");
    CUdevice device = 0;
    if (CUresult r = d.deviceGet(&device, cudaDevice); r != CUDA_SUCCESS)
        return failed(r, "cuDeviceGet(" + std::to_string(cudaDevice) + ")");
    int major = 0;
    d.attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);

    CUdevResource whole{};
    if (CUresult r = d.deviceResource(device, &whole, CU_DEV_RESOURCE_TYPE_SM); r != CUDA_SUCCESS)
        return failed(r, "cuDeviceGetDevResource (the GPU's SMs)");
    auto plan = planSmPartitions(rulesOf(whole.sm, major), partitions);
    if (!plan) return makeError("GPU " + std::to_string(cudaDevice) + ": " + plan.error().message);

    std::vector<CUdevResource> groups(static_cast<std::size_t>(partitions));
    unsigned int made = static_cast<unsigned int>(partitions);
    CUdevResource rest{};
    if (CUresult r =
            d.split(groups.data(), &made, &whole, &rest, 0, static_cast<unsigned int>(plan->sms_per_partition));
        r != CUDA_SUCCESS)
        return failed(r, "cuDevSmResourceSplitByCount(" + describe(*plan) + ")");
    std::vector<int> sizes;
    for (unsigned int i = 0; i < made; ++i) sizes.push_back(static_cast<int>(groups[i].sm.smCount));
    if (auto ok = checkDriverSplit(*plan, sizes); !ok) return ok.error();

    std::unique_ptr<GreenContexts> made_(new GreenContexts());
    made_->driver_ = &d;
    made_->device_ = cudaDevice;
    made_->plan_ = *plan;
    for (int i = 0; i < partitions; ++i) {
        const std::string which = "SM partition " + std::to_string(i) + " of " + describe(*plan);
        CUdevResourceDesc desc{};
        if (CUresult r = d.describe(&desc, &groups[static_cast<std::size_t>(i)], 1); r != CUDA_SUCCESS)
            return failed(r, "cuDevResourceGenerateDesc (" + which + ")");
        CUgreenCtx context = nullptr;
        // The flag is required: a green context's streams need its default stream.
        if (CUresult r = d.createContext(&context, desc, device, CU_GREEN_CTX_DEFAULT_STREAM); r != CUDA_SUCCESS)
            return failed(r, "cuGreenCtxCreate (" + which + ")");
        made_->contexts_.push_back(context);
        CUstream stream = nullptr;
        // Green-context streams must be non-blocking (the driver refuses others); the runner
        // orders them against each other with events (StreamSync.h).
        if (CUresult r = d.createStream(&stream, context, CU_STREAM_NON_BLOCKING, 0); r != CUDA_SUCCESS)
            return failed(r, "cuGreenCtxStreamCreate (" + which + ")");
        made_->streams_.push_back(stream);
    }
    return made_;
}

GreenContexts::~GreenContexts() {
    if (!driver_) return;
    for (void* s : streams_) driver_->destroyStream(static_cast<CUstream>(s));
    for (void* c : contexts_) driver_->destroyContext(static_cast<CUgreenCtx>(c));
}

#else

struct GreenContexts::Driver {};

Result<std::unique_ptr<GreenContexts>> GreenContexts::create(int, int) {
    return makeError("SM partitions need the CUDA toolkit's headers, which this mario-executor was built without "
                     "(build it on a GPU node with packaging/gpu-node.sh)");
}

GreenContexts::~GreenContexts() = default;

#endif

}  // namespace mario::exec
