/* libamdhip64.so.5 that returns at once (bench only): the functions the HIP
   launch loop calls and those the shim calls for itself. Argument lists are
   irrelevant to a function that reads none of them; results are hipSuccess
   (0), except hipPointerGetAttributes, which knows no pointer. */
#define NULL_HIP(name) __attribute__((visibility("default"))) int name(void) { return 0; }

NULL_HIP(hipInit)
NULL_HIP(hipSetDevice)
NULL_HIP(hipGetDevice)
NULL_HIP(hipStreamCreate)
NULL_HIP(hipStreamSynchronize)
NULL_HIP(hipLaunchKernel)
NULL_HIP(hipEventCreateWithFlags)
NULL_HIP(hipEventRecord)
NULL_HIP(hipEventQuery)
NULL_HIP(hipEventSynchronize)
NULL_HIP(hipEventElapsedTime)
NULL_HIP(hipEventDestroy)
NULL_HIP(hipGetDeviceProperties)
NULL_HIP(hipStreamIsCapturing)
NULL_HIP(hipThreadExchangeStreamCaptureMode)
NULL_HIP(hipPeekAtLastError)
NULL_HIP(hipGetLastError)
NULL_HIP(hipGetSymbolAddress)

__attribute__((visibility("default"))) int hipPointerGetAttributes(void) { return 1; /* hipErrorInvalidValue */ }
