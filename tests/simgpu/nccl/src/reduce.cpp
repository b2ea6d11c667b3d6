#include "reduce.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace simnccl {
namespace {

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  const int32_t exponent = int32_t((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffff;
  if (((bits >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  if (exponent >= 31) return uint16_t(sign | 0x7c00);
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    mantissa |= 0x800000;
    const int shift = 14 - exponent;
    uint32_t half_mantissa = mantissa >> shift;
    if ((mantissa >> (shift - 1)) & 1) ++half_mantissa;  // round half up
    return uint16_t(sign | half_mantissa);
  }
  uint32_t result = uint32_t(sign) | (uint32_t(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (result & 1))) ++result;  // round to nearest even
  return uint16_t(result);
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return uint16_t((bits + rounding) >> 16);
}

template <typename T>
T apply(T a, T b, ncclRedOp_t op) {
  switch (op) {
    case ncclProd: return T(a * b);
    case ncclMax: return std::max(a, b);
    case ncclMin: return std::min(a, b);
    default: return T(a + b);  // ncclSum, ncclAvg (divided at the end)
  }
}

template <typename T>
void reduce_typed(void* accumulator, const void* input, size_t count, ncclRedOp_t op) {
  auto* acc = static_cast<T*>(accumulator);
  const auto* in = static_cast<const T*>(input);
  for (size_t i = 0; i < count; ++i) acc[i] = apply<T>(acc[i], in[i], op);
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void reduce_16bit(void* accumulator, const void* input, size_t count, ncclRedOp_t op) {
  auto* acc = static_cast<uint16_t*>(accumulator);
  const auto* in = static_cast<const uint16_t*>(input);
  for (size_t i = 0; i < count; ++i) acc[i] = FromFloat(apply<float>(ToFloat(acc[i]), ToFloat(in[i]), op));
}

template <typename T>
void divide_typed(void* accumulator, size_t count, int nranks) {
  auto* acc = static_cast<T*>(accumulator);
  for (size_t i = 0; i < count; ++i) acc[i] = T(acc[i] / T(nranks));
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void divide_16bit(void* accumulator, size_t count, int nranks) {
  auto* acc = static_cast<uint16_t*>(accumulator);
  for (size_t i = 0; i < count; ++i) acc[i] = FromFloat(ToFloat(acc[i]) / float(nranks));
}

}  // namespace

size_t datatype_bytes(ncclDataType_t datatype) {
  switch (datatype) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
  }
}

bool can_reduce(ncclDataType_t datatype, ncclRedOp_t op) {
  if (op < ncclSum || op > ncclAvg) return false;
  return datatype_bytes(datatype) != 0 && datatype != ncclFloat8e4m3 && datatype != ncclFloat8e5m2;
}

void reduce_into(void* accumulator, const void* input, size_t count, ncclDataType_t datatype, ncclRedOp_t op) {
  switch (datatype) {
    case ncclInt8: reduce_typed<int8_t>(accumulator, input, count, op); break;
    case ncclUint8: reduce_typed<uint8_t>(accumulator, input, count, op); break;
    case ncclInt32: reduce_typed<int32_t>(accumulator, input, count, op); break;
    case ncclUint32: reduce_typed<uint32_t>(accumulator, input, count, op); break;
    case ncclInt64: reduce_typed<int64_t>(accumulator, input, count, op); break;
    case ncclUint64: reduce_typed<uint64_t>(accumulator, input, count, op); break;
    case ncclFloat32: reduce_typed<float>(accumulator, input, count, op); break;
    case ncclFloat64: reduce_typed<double>(accumulator, input, count, op); break;
    case ncclFloat16: reduce_16bit<half_to_float, float_to_half>(accumulator, input, count, op); break;
    case ncclBfloat16: reduce_16bit<bf16_to_float, float_to_bf16>(accumulator, input, count, op); break;
    default: break;
  }
}

void finish_average(void* accumulator, size_t count, ncclDataType_t datatype, int nranks) {
  switch (datatype) {
    case ncclInt8: divide_typed<int8_t>(accumulator, count, nranks); break;
    case ncclUint8: divide_typed<uint8_t>(accumulator, count, nranks); break;
    case ncclInt32: divide_typed<int32_t>(accumulator, count, nranks); break;
    case ncclUint32: divide_typed<uint32_t>(accumulator, count, nranks); break;
    case ncclInt64: divide_typed<int64_t>(accumulator, count, nranks); break;
    case ncclUint64: divide_typed<uint64_t>(accumulator, count, nranks); break;
    case ncclFloat32: divide_typed<float>(accumulator, count, nranks); break;
    case ncclFloat64: divide_typed<double>(accumulator, count, nranks); break;
    case ncclFloat16: divide_16bit<half_to_float, float_to_half>(accumulator, count, nranks); break;
    case ncclBfloat16: divide_16bit<bf16_to_float, float_to_bf16>(accumulator, count, nranks); break;
    default: break;
  }
}

}  // namespace simnccl
