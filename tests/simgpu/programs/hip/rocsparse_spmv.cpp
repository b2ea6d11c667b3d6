// Real rocSPARSE (Debian's librocsparse0) on the simulated HIP runtime,
// unmodified: y = A x for a tridiagonal CSR matrix (analysis, then the
// product). Exits non-zero if rocSPARSE reports an error.
#include <hip/hip_runtime_api.h>
#include <rocsparse/rocsparse.h>

#include <cstdio>
#include <vector>

#define CHECK(call)                                                                             \
  do {                                                                                          \
    const int status_ = static_cast<int>(call);                                                 \
    if (status_ != 0) {                                                                         \
      std::fprintf(stderr, "rocsparse_spmv: %s failed: %d\n", #call, status_);                  \
      return 1;                                                                                 \
    }                                                                                           \
  } while (0)

int main() {
  constexpr int n = 1024;
  std::vector<int> rows{0}, columns;
  std::vector<float> values;
  for (int i = 0; i < n; ++i) {
    for (int j = i - 1; j <= i + 1; ++j) {
      if (j < 0 || j >= n) continue;
      columns.push_back(j);
      values.push_back(j == i ? 2.0f : -1.0f);
    }
    rows.push_back(static_cast<int>(columns.size()));
  }
  const int nnz = static_cast<int>(values.size());
  std::vector<float> x(n, 1.0f);
  int *d_rows, *d_columns;
  float *d_values, *d_x, *d_y;
  CHECK(hipMalloc(reinterpret_cast<void**>(&d_rows), rows.size() * sizeof(int)));
  CHECK(hipMalloc(reinterpret_cast<void**>(&d_columns), columns.size() * sizeof(int)));
  CHECK(hipMalloc(reinterpret_cast<void**>(&d_values), values.size() * sizeof(float)));
  CHECK(hipMalloc(reinterpret_cast<void**>(&d_x), n * sizeof(float)));
  CHECK(hipMalloc(reinterpret_cast<void**>(&d_y), n * sizeof(float)));
  CHECK(hipMemcpy(d_rows, rows.data(), rows.size() * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_columns, columns.data(), columns.size() * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_values, values.data(), values.size() * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(d_x, x.data(), n * sizeof(float), hipMemcpyHostToDevice));

  rocsparse_handle handle;
  rocsparse_mat_descr descr;
  rocsparse_mat_info info;
  CHECK(rocsparse_create_handle(&handle));
  CHECK(rocsparse_create_mat_descr(&descr));
  CHECK(rocsparse_create_mat_info(&info));
  CHECK(rocsparse_scsrmv_analysis(handle, rocsparse_operation_none, n, n, nnz, descr, d_values, d_rows, d_columns,
                                  info));
  const float alpha = 1.0f, beta = 0.0f;
  CHECK(rocsparse_scsrmv(handle, rocsparse_operation_none, n, n, nnz, &alpha, descr, d_values, d_rows, d_columns, info,
                         d_x, &beta, d_y));
  CHECK(hipDeviceSynchronize());
  std::vector<float> y(n);
  CHECK(hipMemcpy(y.data(), d_y, n * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(rocsparse_destroy_mat_info(info));
  CHECK(rocsparse_destroy_mat_descr(descr));
  CHECK(rocsparse_destroy_handle(handle));
  for (void* p : {static_cast<void*>(d_rows), static_cast<void*>(d_columns), static_cast<void*>(d_values),
                  static_cast<void*>(d_x), static_cast<void*>(d_y)})
    CHECK(hipFree(p));
  std::printf("rocsparse_spmv: y = A x for a %dx%d matrix with %d nonzeros\n", n, n, nnz);
  return 0;
}
