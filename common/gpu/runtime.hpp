// Host-side portability layer: checked runtime calls, RAII buffers, events and streams.
// Every failure throws gpu::ApiError naming the call, file:line and the API's message.
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include "common/gpu/backend/hip/runtime.hpp"
#else
#include "common/gpu/backend/cuda/runtime.hpp"
#endif

#include <cstddef>
#include <source_location>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/gpu/device_info.hpp"

namespace schedlab::gpu {

class ApiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check(api::status_t status, const char* what,
                  std::source_location loc = std::source_location::current()) {
  if (status != api::kOk) {
    throw ApiError(std::string(api::kBackendName) + ": " + what + " failed at " + loc.file_name() + ":" +
                   std::to_string(loc.line()) + ": " + api::error_string(status));
  }
}
#define SCHEDLAB_GPU_CHECK(call) ::schedlab::gpu::check((call), #call)

// Raises the launch's error (bad configuration, too much shared memory) at its call site.
inline void check_launch(const char* kernel_name, std::source_location loc = std::source_location::current()) {
  check(api::get_last_error(), (std::string("launch of ") + kernel_name).c_str(), loc);
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) SCHEDLAB_GPU_CHECK(api::malloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  void reset() noexcept {
    if (ptr_) (void)api::free(ptr_);  // destructor path: nothing useful to do with an error
    ptr_ = nullptr;
    count_ = 0;
  }
  T* data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    SCHEDLAB_GPU_CHECK(api::memcpy_h2d(ptr_, host.data(), bytes()));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    SCHEDLAB_GPU_CHECK(api::memcpy_d2h(host.data(), ptr_, bytes()));
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

class Stream {
 public:
  Stream() { SCHEDLAB_GPU_CHECK(api::stream_create(&s_)); }
  ~Stream() { (void)api::stream_destroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  api::stream_t get() const { return s_; }
  void synchronize() const { SCHEDLAB_GPU_CHECK(api::stream_synchronize(s_)); }

 private:
  api::stream_t s_{};
};

class Event {
 public:
  Event() { SCHEDLAB_GPU_CHECK(api::event_create(&e_)); }
  ~Event() { (void)api::event_destroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(api::stream_t s) { SCHEDLAB_GPU_CHECK(api::event_record(e_, s)); }
  void synchronize() { SCHEDLAB_GPU_CHECK(api::event_synchronize(e_)); }
  // Milliseconds from `start` to this event; both must have completed.
  float elapsed_ms_since(const Event& start) const {
    float ms = 0.f;
    SCHEDLAB_GPU_CHECK(api::event_elapsed_ms(&ms, start.e_, e_));
    return ms;
  }

 private:
  api::event_t e_{};
};

inline int device_count() {
  int n = 0;
  // No driver or no device is an answer here, not an error: callers report "no GPU".
  if (api::get_device_count(&n) != api::kOk) {
    (void)api::get_last_error();
    return 0;
  }
  return n;
}

// Bytes of the current device's memory free now (what other processes hold is not free).
inline std::size_t free_memory_bytes() {
  std::size_t free = 0, total = 0;
  SCHEDLAB_GPU_CHECK(api::mem_get_info(&free, &total));
  return free;
}

inline DeviceInfo device_info(int dev = 0) {
  api::RawDeviceProps p{};
  SCHEDLAB_GPU_CHECK(api::get_device_props(&p, dev));
  DeviceInfo d;
  d.name = p.name;
  d.arch = p.arch_name;
  d.backend = api::kBackendName;
  d.sm_count = p.sm_count;
  d.l2_bytes = p.l2_bytes;
  d.smem_per_block_optin = p.smem_per_block_optin;
  d.smem_per_sm = p.smem_per_sm;
  d.regs_per_sm = p.regs_per_sm;
  d.warp_size = p.warp_size;
  d.max_threads_per_sm = p.max_threads_per_sm;
  d.sm_clock_khz = p.sm_clock_khz;
  d.mem_clock_khz = p.mem_clock_khz;
  d.mem_bus_bits = p.mem_bus_bits;
  SCHEDLAB_GPU_CHECK(api::driver_version(&d.driver_version));
  SCHEDLAB_GPU_CHECK(api::runtime_version(&d.runtime_version));
  return d;
}

template <class Kernel>
int max_active_blocks(Kernel kernel, int block_threads, std::size_t dynamic_smem) {
  int blocks = 0;
  SCHEDLAB_GPU_CHECK(api::occupancy_max_active_blocks(&blocks, kernel, block_threads, dynamic_smem));
  return blocks;
}

template <class Kernel>
void set_max_dynamic_smem(Kernel kernel, std::size_t bytes) {
  SCHEDLAB_GPU_CHECK(api::set_max_dynamic_smem(kernel, static_cast<int>(bytes)));
}

}  // namespace schedlab::gpu
