/* nocuda.h — the CUDA driver API's types, constants and entry-point types
 * that cudag uses, declared for a build on a machine without the CUDA
 * toolkit (no cuda.h), so that the library, `cudag check`, `dot` and `plan`
 * build and work there.  Such a build never opens libcuda: driver.c refuses
 * with one sentence, so these declarations are what the code needs to
 * compile (and what the CPU suites' fake driver implements), not a copy of
 * the driver's ABI; the numbers match cuda.h so messages read the same.
 * driver.h includes this file only where cuda.h is missing; every entry of
 * CUDAG__DRIVER_FUNCS needs its PFN_ type below. */
#ifndef CUDAG_NOCUDA_H
#define CUDAG_NOCUDA_H

#include <stddef.h>

typedef unsigned long long cuuint64_t;
typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
typedef struct CUlib_st *CUlibrary;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_ILLEGAL_STATE = 401,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
    CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
    CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
} CUdevice_attribute;

typedef enum CUfunction_attribute_enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
    CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
} CUfunction_attribute;

typedef enum CUgraphNodeType_enum {
    CU_GRAPH_NODE_TYPE_KERNEL = 0,
    CU_GRAPH_NODE_TYPE_MEMCPY = 1,
    CU_GRAPH_NODE_TYPE_MEMSET = 2,
    CU_GRAPH_NODE_TYPE_HOST = 3,
    CU_GRAPH_NODE_TYPE_GRAPH = 4,
    CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6,
    CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7,
    CU_GRAPH_NODE_TYPE_CONDITIONAL = 13
} CUgraphNodeType;

typedef enum CUstreamCaptureMode_enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;

typedef void (*CUhostFn)(void *userData);

typedef struct CUDA_HOST_NODE_PARAMS {
    CUhostFn fn;
    void *userData;
} CUDA_HOST_NODE_PARAMS;

typedef enum CUgraphInstantiateResult_enum {
    CUDA_GRAPH_INSTANTIATE_SUCCESS = 0,
    CUDA_GRAPH_INSTANTIATE_ERROR = 1,
    CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE = 2,
    CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED = 3,
    CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED = 4
} CUgraphInstantiateResult;

typedef enum CUgraphExecUpdateResult_enum {
    CU_GRAPH_EXEC_UPDATE_SUCCESS = 0,
    CU_GRAPH_EXEC_UPDATE_ERROR = 1,
    CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED = 2,
    CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED = 3,
    CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED = 4,
    CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED = 5,
    CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED = 6,
    CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE = 7,
    CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED = 8
} CUgraphExecUpdateResult;

typedef enum CUmemorytype_enum { CU_MEMORYTYPE_DEVICE = 2 } CUmemorytype;
typedef enum CUjit_option_enum { CU_JIT_NONE_ = 0 } CUjit_option;
typedef enum CUlibraryOption_enum { CU_LIBRARY_NONE_ = 0 } CUlibraryOption;

enum {
    CU_STREAM_NON_BLOCKING = 1,
    CU_EVENT_DEFAULT = 0,
    CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    CU_GET_PROC_ADDRESS_SUCCESS = 0,
    CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC = 1,
    CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER = 2,
    CU_GRAPH_DEPENDENCY_TYPE_DEFAULT = 0,
    CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC = 1,
    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
    CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
    CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD = 2,
    CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH = 4,
    CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY = 8
};
typedef int CUdriverProcAddressQueryResult;

/* Conditional nodes (kinds/cond.c): a handle kernels set, and the node's
 * parameters in the driver's generic node description. */
typedef unsigned long long CUgraphConditionalHandle;
typedef enum CUgraphConditionalNodeType_enum {
    CU_GRAPH_COND_TYPE_IF = 0,
    CU_GRAPH_COND_TYPE_WHILE = 1,
    CU_GRAPH_COND_TYPE_SWITCH = 2
} CUgraphConditionalNodeType;
#define CU_GRAPH_COND_ASSIGN_DEFAULT 0x1
typedef struct CUDA_CONDITIONAL_NODE_PARAMS {
    CUgraphConditionalHandle handle;
    CUgraphConditionalNodeType type;
    unsigned size;
    CUgraph *phGraph_out;
    CUcontext ctx;
} CUDA_CONDITIONAL_NODE_PARAMS;
typedef struct CUgraphNodeParams_st {
    CUgraphNodeType type;
    int reserved0[3];
    union {
        long long reserved1[29];
        CUDA_CONDITIONAL_NODE_PARAMS conditional;
    };
    long long reserved2;
} CUgraphNodeParams;

typedef struct CUDA_KERNEL_NODE_PARAMS {
    CUfunction func;
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern;
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;

typedef struct CUDA_MEMSET_NODE_PARAMS {
    CUdeviceptr dst;
    size_t pitch;
    unsigned value, elementSize;
    size_t width, height;
} CUDA_MEMSET_NODE_PARAMS;

typedef struct CUDA_MEMCPY3D {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    CUmemorytype srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    CUmemorytype dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;

/* The value union is 64 bytes in cuda.h; only the members used here. */
typedef union CUlaunchAttributeValue {
    char pad[64];
    struct {
        unsigned x, y, z;
    } clusterDim;
    int programmaticStreamSerializationAllowed;
    int priority;
} CUlaunchAttributeValue;
typedef CUlaunchAttributeValue CUkernelNodeAttrValue;
typedef int CUkernelNodeAttrID;

typedef struct CUlaunchAttribute {
    int id;
    CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig {
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

typedef struct CUgraphEdgeData {
    unsigned char from_port, to_port, type, reserved[5];
} CUgraphEdgeData;

typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS {
    cuuint64_t flags;
    CUstream hUploadStream;
    CUgraphNode hErrNode_out;
    CUgraphInstantiateResult result_out;
} CUDA_GRAPH_INSTANTIATE_PARAMS;

typedef struct CUgraphExecUpdateResultInfo {
    CUgraphExecUpdateResult result;
    CUgraphNode errorNode, errorFromNode;
} CUgraphExecUpdateResultInfo;

/* The entry points, named as cudaTypedefs.h names them. */
typedef CUresult (*PFN_cuGetErrorName_v6000)(CUresult, const char **);
typedef CUresult (*PFN_cuGetErrorString_v6000)(CUresult, const char **);
typedef CUresult (*PFN_cuInit_v2000)(unsigned);
typedef CUresult (*PFN_cuDriverGetVersion_v2020)(int *);
typedef CUresult (*PFN_cuDeviceGetCount_v2000)(int *);
typedef CUresult (*PFN_cuDeviceGet_v2000)(CUdevice *, int);
typedef CUresult (*PFN_cuDeviceGetName_v2000)(char *, int, CUdevice);
typedef CUresult (*PFN_cuDeviceGetAttribute_v2000)(int *, CUdevice_attribute,
                                                   CUdevice);
typedef CUresult (*PFN_cuDevicePrimaryCtxRetain_v7000)(CUcontext *, CUdevice);
typedef CUresult (*PFN_cuDevicePrimaryCtxRelease_v11000)(CUdevice);
typedef CUresult (*PFN_cuCtxPushCurrent_v4000)(CUcontext);
typedef CUresult (*PFN_cuCtxPopCurrent_v4000)(CUcontext *);
typedef CUresult (*PFN_cuCtxGetDevice_v2000)(CUdevice *);
typedef CUresult (*PFN_cuCtxSynchronize_v2000)(void);
typedef CUresult (*PFN_cuStreamCreate_v2000)(CUstream *, unsigned);
typedef CUresult (*PFN_cuStreamDestroy_v4000)(CUstream);
typedef CUresult (*PFN_cuStreamSynchronize_v2000)(CUstream);
typedef CUresult (*PFN_cuStreamQuery_v2000)(CUstream);
typedef CUresult (*PFN_cuStreamBeginCapture_v10010)(CUstream,
                                                    CUstreamCaptureMode);
typedef CUresult (*PFN_cuStreamEndCapture_v10000)(CUstream, CUgraph *);
typedef CUresult (*PFN_cuLaunchHostFunc_v10000)(CUstream, CUhostFn, void *);
typedef CUresult (*PFN_cuEventCreate_v2000)(CUevent *, unsigned);
typedef CUresult (*PFN_cuEventRecord_v2000)(CUevent, CUstream);
typedef CUresult (*PFN_cuEventSynchronize_v2000)(CUevent);
typedef CUresult (*PFN_cuEventQuery_v2000)(CUevent);
typedef CUresult (*PFN_cuEventElapsedTime_v2000)(float *, CUevent, CUevent);
typedef CUresult (*PFN_cuEventDestroy_v4000)(CUevent);
typedef CUresult (*PFN_cuMemGetInfo_v3020)(size_t *, size_t *);
typedef CUresult (*PFN_cuMemAlloc_v3020)(CUdeviceptr *, size_t);
typedef CUresult (*PFN_cuMemFree_v3020)(CUdeviceptr);
typedef CUresult (*PFN_cuMemcpyHtoDAsync_v3020)(CUdeviceptr, const void *,
                                                size_t, CUstream);
typedef CUresult (*PFN_cuMemcpyDtoHAsync_v3020)(void *, CUdeviceptr, size_t,
                                                CUstream);
typedef CUresult (*PFN_cuMemsetD8Async_v3020)(CUdeviceptr, unsigned char,
                                              size_t, CUstream);
typedef CUresult (*PFN_cuMemsetD16Async_v3020)(CUdeviceptr, unsigned short,
                                               size_t, CUstream);
typedef CUresult (*PFN_cuMemsetD32Async_v3020)(CUdeviceptr, unsigned, size_t,
                                               CUstream);
typedef CUresult (*PFN_cuMemcpyDtoDAsync_v3020)(CUdeviceptr, CUdeviceptr,
                                                size_t, CUstream);
typedef CUresult (*PFN_cuLibraryLoadFromFile_v12000)(
    CUlibrary *, const char *, CUjit_option *, void **, unsigned,
    CUlibraryOption *, void **, unsigned);
typedef CUresult (*PFN_cuGraphAddNode_v12030)(
    CUgraphNode *, CUgraph, const CUgraphNode *, const CUgraphEdgeData *,
    size_t, CUgraphNodeParams *);
typedef CUresult (*PFN_cuGraphConditionalHandleCreate_v12030)(
    CUgraphConditionalHandle *, CUgraph, CUcontext, unsigned, unsigned);
typedef CUresult (*PFN_cuLibraryLoadData_v12000)(
    CUlibrary *, const void *, CUjit_option *, void **, unsigned,
    CUlibraryOption *, void **, unsigned);
typedef CUresult (*PFN_cuLibraryUnload_v12000)(CUlibrary);
typedef CUresult (*PFN_cuLibraryGetKernel_v12000)(CUkernel *, CUlibrary,
                                                  const char *);
typedef CUresult (*PFN_cuKernelGetFunction_v12000)(CUfunction *, CUkernel);
typedef CUresult (*PFN_cuFuncGetAttribute_v2020)(int *, CUfunction_attribute,
                                                 CUfunction);
typedef CUresult (*PFN_cuFuncSetAttribute_v9000)(CUfunction,
                                                 CUfunction_attribute, int);
typedef CUresult (*PFN_cuFuncGetParamInfo_v12040)(CUfunction, size_t, size_t *,
                                                  size_t *);
typedef CUresult (*PFN_cuLaunchKernelEx_v11060)(const CUlaunchConfig *,
                                                CUfunction, void **, void **);
typedef CUresult (*PFN_cuGraphCreate_v10000)(CUgraph *, unsigned);
typedef CUresult (*PFN_cuGraphDestroy_v10000)(CUgraph);
typedef CUresult (*PFN_cuGraphAddKernelNode_v12000)(
    CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
    const CUDA_KERNEL_NODE_PARAMS *);
typedef CUresult (*PFN_cuGraphKernelNodeSetAttribute_v11000)(
    CUgraphNode, CUkernelNodeAttrID, const CUkernelNodeAttrValue *);
typedef CUresult (*PFN_cuGraphAddMemsetNode_v10000)(
    CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
    const CUDA_MEMSET_NODE_PARAMS *, CUcontext);
typedef CUresult (*PFN_cuGraphAddMemcpyNode_v10000)(
    CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_MEMCPY3D *,
    CUcontext);
typedef CUresult (*PFN_cuGraphAddChildGraphNode_v10000)(
    CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);
typedef CUresult (*PFN_cuGraphChildGraphNodeGetGraph_v10000)(CUgraphNode,
                                                             CUgraph *);
typedef CUresult (*PFN_cuGraphAddEventRecordNode_v11010)(
    CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUevent);
typedef CUresult (*PFN_cuGraphAddEventWaitNode_v11010)(
    CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUevent);
typedef CUresult (*PFN_cuGraphAddHostNode_v10000)(
    CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
    const CUDA_HOST_NODE_PARAMS *);
typedef CUresult (*PFN_cuGraphAddDependencies_v12030)(
    CUgraph, const CUgraphNode *, const CUgraphNode *, const CUgraphEdgeData *,
    size_t);
typedef CUresult (*PFN_cuGraphGetEdges_v12030)(CUgraph, CUgraphNode *,
                                               CUgraphNode *, CUgraphEdgeData *,
                                               size_t *);
typedef CUresult (*PFN_cuGraphInstantiateWithParams_v12000)(
    CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
typedef CUresult (*PFN_cuGraphUpload_v11010)(CUgraphExec, CUstream);
typedef CUresult (*PFN_cuGraphLaunch_v10000)(CUgraphExec, CUstream);
typedef CUresult (*PFN_cuGraphExecDestroy_v10000)(CUgraphExec);
typedef CUresult (*PFN_cuGraphExecKernelNodeSetParams_v12000)(
    CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
typedef CUresult (*PFN_cuGraphExecMemsetNodeSetParams_v10020)(
    CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *, CUcontext);
typedef CUresult (*PFN_cuGraphExecMemcpyNodeSetParams_v10020)(
    CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D *, CUcontext);
typedef CUresult (*PFN_cuGraphExecChildGraphNodeSetParams_v11010)(CUgraphExec,
                                                                CUgraphNode,
                                                                CUgraph);
typedef CUresult (*PFN_cuGraphExecUpdate_v12000)(CUgraphExec, CUgraph,
                                                 CUgraphExecUpdateResultInfo *);

#endif /* CUDAG_NOCUDA_H */
