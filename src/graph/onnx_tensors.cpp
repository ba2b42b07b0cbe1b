// SPDX-License-Identifier: Apache-2.0
// ONNX tensors, types and attributes to graph values and attributes (see onnx_convert.h).
// Compiled to nothing without TT_WITH_ONNX.
#ifdef TT_WITH_ONNX

#include "graph/onnx_convert.h"
#include "tensortune/support/error.h"

#include <cstring>
#include <memory>

namespace tensortune::graph::onnx_detail {
namespace {

using onnx::TensorProto;

/// Bytes per element in raw_data; 0 for unsupported types.
size_t element_bytes(int elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
    case TensorProto::INT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
      return 8;
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::UINT8:
      return 1;
    default:
      return 0;
  }
}

template <class T, class Out>
void append_raw(const std::string& raw, size_t n, std::vector<Out>* out) {
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    T element;
    std::memcpy(&element, raw.data() + i * sizeof(T), sizeof(T));
    out->push_back(static_cast<Out>(element));
  }
}

/// Decodes raw_data (little-endian, as ONNX stores it); the caller checked the size.
void decode_raw(const TensorProto& tensor, size_t n, ConstantData* data) {
  const std::string& raw = tensor.raw_data();
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
      return append_raw<float>(raw, n, &data->floats);
    case TensorProto::DOUBLE:
      return append_raw<double>(raw, n, &data->floats);
    case TensorProto::INT64:
      return append_raw<int64_t>(raw, n, &data->ints);
    case TensorProto::INT32:
      return append_raw<int32_t>(raw, n, &data->ints);
    case TensorProto::INT8:
      return append_raw<int8_t>(raw, n, &data->ints);
    default:  // BOOL, UINT8
      return append_raw<uint8_t>(raw, n, &data->ints);
  }
}

/// The number of elements in the typed field that holds `tensor`'s data.
size_t typed_count(const TensorProto& tensor) {
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
      return static_cast<size_t>(tensor.float_data_size());
    case TensorProto::DOUBLE:
      return static_cast<size_t>(tensor.double_data_size());
    case TensorProto::INT64:
      return static_cast<size_t>(tensor.int64_data_size());
    default:  // INT32, INT8, UINT8, BOOL are stored in int32_data
      return static_cast<size_t>(tensor.int32_data_size());
  }
}

void decode_typed(const TensorProto& tensor, ConstantData* data) {
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
      data->floats.assign(tensor.float_data().begin(), tensor.float_data().end());
      return;
    case TensorProto::DOUBLE:
      for (double d : tensor.double_data()) {
        data->floats.push_back(static_cast<float>(d));
      }
      return;
    case TensorProto::INT64:
      data->ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      return;
    default:
      data->ints.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      return;
  }
}

Value make_constant(const std::string& name,
                    ir::DataType dtype,
                    std::vector<int64_t> shape,
                    ConstantData data) {
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.data = std::make_shared<const ConstantData>(std::move(data));
  return v;
}

}  // namespace

bool to_dtype(int elem_type, ir::DataType* dtype) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      *dtype = ir::DataType::float32();
      return true;
    case TensorProto::DOUBLE:
      *dtype = ir::DataType::float64();
      return true;
    case TensorProto::INT64:
      *dtype = ir::DataType::int64();
      return true;
    case TensorProto::INT32:
      *dtype = ir::DataType::int32();
      return true;
    case TensorProto::BOOL:
      // Kernels compute on numbers (te has no bool tensors): a bool is a uint8 0 or 1, as ONNX
      // Runtime stores it; comparisons write it and Where reads it (op_lowering_elementwise.cpp).
      *dtype = ir::DataType(ir::DataType::Code::UInt, 8);
      return true;
    case TensorProto::INT8:
      *dtype = ir::DataType(ir::DataType::Code::Int, 8);
      return true;
    case TensorProto::UINT8:
      *dtype = ir::DataType(ir::DataType::Code::UInt, 8);
      return true;
    default:
      return false;
  }
}

std::string dtype_name(int elem_type) {
  if (!onnx::TensorProto_DataType_IsValid(elem_type)) {
    return "data type " + std::to_string(elem_type);
  }
  return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
}

bool has_external_data(const TensorProto& tensor) {
  return tensor.data_location() == TensorProto::EXTERNAL;
}

Value constant_from_tensor(const TensorProto& tensor,
                           const std::string& name,
                           const std::string& what) {
  TT_USER_CHECK(!has_external_data(tensor))
      << "'" << what << "': tensor '" << name
      << "' keeps its data in an external file, which tensortune does not read";
  ir::DataType dtype;
  TT_USER_CHECK(to_dtype(tensor.data_type(), &dtype))
      << "'" << what << "': constant '" << name << "' has unsupported data type "
      << dtype_name(tensor.data_type());
  std::vector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  size_t n = 1;
  for (int64_t d : shape) {
    TT_USER_CHECK(d >= 0 && (d == 0 || n <= (size_t{1} << 40) / static_cast<size_t>(d)))
        << "'" << what << "': constant '" << name << "' has dimension " << d;
    n *= static_cast<size_t>(d);
  }
  ConstantData data;
  if (tensor.has_raw_data()) {
    size_t bytes = element_bytes(tensor.data_type());
    TT_USER_CHECK(tensor.raw_data().size() == n * bytes)
        << "'" << what << "': constant '" << name << "' has " << tensor.raw_data().size()
        << " bytes of data, its shape needs " << n * bytes;
    decode_raw(tensor, n, &data);
  } else {
    TT_USER_CHECK(typed_count(tensor) == n)
        << "'" << what << "': constant '" << name << "' has " << typed_count(tensor)
        << " elements, its shape needs " << n;
    decode_typed(tensor, &data);
  }
  return make_constant(name, dtype, std::move(shape), std::move(data));
}

void normalize_constant(onnx::NodeProto* node) {
  for (onnx::AttributeProto& a : *node->mutable_attribute()) {
    const std::string name = a.name();  // a.Clear() below resets a.name()
    bool scalar = name == "value_float" || name == "value_int";
    bool is_float = name == "value_float" || name == "value_floats";
    if (!scalar && name != "value_floats" && name != "value_ints") {
      continue;
    }
    TensorProto t;
    t.set_data_type(is_float ? TensorProto::FLOAT : TensorProto::INT64);
    if (scalar && is_float) {
      t.add_float_data(a.f());
    } else if (scalar) {
      t.add_int64_data(a.i());
    } else {
      t.add_dims(is_float ? a.floats_size() : a.ints_size());
      t.mutable_float_data()->CopyFrom(a.floats());
      t.mutable_int64_data()->CopyFrom(a.ints());
    }
    a.Clear();
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    *a.mutable_t() = std::move(t);
  }
}

Value constant_from_node(const onnx::NodeProto& node,
                         const std::string& node_name,
                         const std::string& what) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    TT_USER_CHECK(a.name() == "value")
        << "'" << what << "': node '" << node_name << "' (Constant): attribute '" << a.name()
        << "' is not supported";
    return constant_from_tensor(a.t(), node.output(0), what);
  }
  TT_USER_CHECK(false) << "'" << what << "': node '" << node_name
                       << "' (Constant) has no value attribute";
  return {};
}

bool to_attribute(const onnx::AttributeProto& proto, Attribute* attr) {
  switch (proto.type()) {
    case onnx::AttributeProto::INT:
      attr->kind = Attribute::Kind::Int;
      attr->i = proto.i();
      return true;
    case onnx::AttributeProto::FLOAT:
      attr->kind = Attribute::Kind::Float;
      attr->f = proto.f();
      return true;
    case onnx::AttributeProto::STRING:
      attr->kind = Attribute::Kind::String;
      attr->s = proto.s();
      return true;
    case onnx::AttributeProto::INTS:
      attr->kind = Attribute::Kind::Ints;
      attr->ints.assign(proto.ints().begin(), proto.ints().end());
      return true;
    case onnx::AttributeProto::FLOATS:
      attr->kind = Attribute::Kind::Floats;
      attr->floats.assign(proto.floats().begin(), proto.floats().end());
      return true;
    default:
      return false;
  }
}

bool static_shape(const onnx::TypeProto& type, std::vector<int64_t>* shape) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) {
    return false;
  }
  shape->clear();
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      return false;
    }
    shape->push_back(dim.dim_value());
  }
  return true;
}

std::string describe_shape(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) {
    return "(not a tensor)";
  }
  if (!type.tensor_type().has_shape()) {
    return "(unknown shape)";
  }
  std::string s = "[";
  for (const auto& dim : type.tensor_type().shape().dim()) {
    s += s.size() > 1 ? "," : "";
    if (dim.has_dim_value()) {
      s += std::to_string(dim.dim_value());
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      s += dim.dim_param();
    } else {
      s += "?";
    }
  }
  return s + "]";
}

}  // namespace tensortune::graph::onnx_detail

#endif  // TT_WITH_ONNX
