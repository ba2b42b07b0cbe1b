#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Produces the tiny ONNX models of tests/models (with reference inputs/outputs as .npy and a
# models.json manifest), the malformed models of the error tests, and, on request, ResNet-18.
"""Exports the ONNX test models of tensortune and their PyTorch reference inputs/outputs.

Usage (Debian's Python, which has torch; CPU only, deterministic, nothing is downloaded):
  /usr/bin/python3 scripts/make_models.py [--out tests/models]   # the tiny committed models
  /usr/bin/python3 scripts/make_models.py --resnet18 DIR         # ResNet-18 for the benchmark
  /usr/bin/python3 scripts/make_models.py --superres DIR         # super-resolution, 224x224
  /usr/bin/python3 scripts/make_models.py --family DIR [--only a,b]  # one model per family

Tiny models: mlp, cnn (BatchNormalization kept), encoder (opset 17, LayerNormalization),
ln_decomposed (LayerNorm written out) and superres (the super-resolution network on 12x12),
plus the bad models unsupported, dynamic, truncated and not_onnx. Every model is checked with
onnx.checker, must have static shapes, and may use only the ops in SUPPORTED. Needs
python3-torch and python3-onnx, and python3-torchvision for --family (--resnet18 writes the
network out without it; --resnet18 and --superres export unchecked without onnx, as on a GPU
machine with PyTorch alone). The family models (FAMILIES: torchvision's MobileNet
v2/v3, EfficientNet, SqueezeNet, ShuffleNet, RegNet, and a PyTorch transformer encoder) have random
weights; an op outside SUPPORTED is reported, not fatal, so the benchmark can name what the
importer still lacks.
"""

import argparse
import inspect
import json
import math
import pathlib
import sys
import warnings

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError:
    print("make_models.py: needs python3-torch and python3-onnx "
          "(apt-get install python3-torch python3-onnx python3-numpy)", file=sys.stderr)
    sys.exit(1)
try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:  # a GPU machine with PyTorch alone: --resnet18 and --superres still export
    onnx = None

# The op set tensortune's ONNX importer supports.
SUPPORTED = set("""Abs Add And AveragePool BatchNormalization Cast Clip Concat Constant
ConstantOfShape Conv DepthToSpace Div Dropout Elu Equal Erf Exp Expand Flatten Gather Gelu Gemm
GlobalAveragePool GlobalMaxPool Greater GreaterOrEqual HardSigmoid HardSwish Identity
LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax MatMul Max MaxPool Min Mul Neg Not Or
PRelu Pad Pow Range Reciprocal ReduceMax ReduceMean ReduceMin ReduceSum Relu Reshape Resize Shape
Sigmoid Slice Softmax Softplus SpaceToDepth Split Sqrt Squeeze Sub Sum Tanh Tile Transpose
Unsqueeze Where""".split())


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 128), nn.Linear(128, 64), nn.Linear(64, 10)
        with torch.no_grad():  # He-scaled weights: the default init gives a near-uniform softmax
            for fc in (self.fc1, self.fc2, self.fc3):
                fc.weight.normal_(0.0, math.sqrt(2.0 / fc.in_features))
                fc.bias.normal_(0.0, 0.1)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = nn.functional.gelu(self.fc2(x))  # exact (erf) GELU
        return torch.softmax(self.fc3(x), dim=-1)


def randomize_bn(module):
    """Gives every BatchNorm non-trivial statistics and affine parameters, so folding is tested."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features) * 0.2)
                m.running_var.copy_(torch.rand(m.num_features) + 0.5)
                m.weight.copy_(torch.rand(m.num_features) + 0.5)
                m.bias.copy_(torch.randn(m.num_features) * 0.2)


class SuperResolutionNet(nn.Module):
    """The PyTorch tutorial's super-resolution network (upscale 3): convs 5x5 1->64, 3x3 64->64,
    3x3 64->32 and 3x3 32->9 with ReLUs, then PixelShuffle(3), which ONNX gets as DepthToSpace."""

    def __init__(self, upscale=3):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 64, 5, padding=2)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1)
        self.conv3 = nn.Conv2d(64, 32, 3, padding=1)
        self.conv4 = nn.Conv2d(32, upscale ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(upscale)

    def forward(self, x):                                 # [1,1,H,W]
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        return self.shuffle(self.conv4(x))                # [1,1,3H,3W]


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0, self.bn0 = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.conv1, self.bn1 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2, stride=2)
        self.conv3 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        # count_include_pad=False: with True (the default) torch 1.13 emits a zero Pad first.
        self.avg = nn.AvgPool2d(2, stride=1, count_include_pad=False)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)
        randomize_bn(self)

    def forward(self, x):                                 # [1,3,16,16]
        x = torch.relu(self.bn0(self.conv0(x)))           # [1,8,16,16]
        r = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(r)) + x)       # residual block
        x = self.pool(x)                                  # [1,8,8,8]
        x = torch.relu(self.conv3(x))                     # [1,16,4,4]
        x = self.avg(x)                                   # [1,16,3,3]
        x = torch.flatten(self.gap(x), 1)                 # [1,16]
        return self.fc(x)                                 # [1,10]


class Encoder(nn.Module):
    """A transformer encoder block written out, with every shape a constant (no Shape ops)."""

    def __init__(self, seq=16, dim=32, heads=2, ffn=64):
        super().__init__()
        self.seq, self.dim, self.heads, self.hd = seq, dim, heads, dim // heads
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.ff1, self.ff2 = nn.Linear(dim, ffn), nn.Linear(ffn, dim)
        with torch.no_grad():  # non-trivial LayerNorm affine parameters
            for ln in (self.ln1, self.ln2):
                ln.weight.copy_(torch.rand(dim) + 0.5)
                ln.bias.copy_(torch.randn(dim) * 0.2)

    def heads_first(self, t):  # [1,S,D] -> [1,H,S,hd]
        return t.reshape(1, self.seq, self.heads, self.hd).transpose(1, 2)

    def forward(self, x):                                 # [1,16,32]
        q, k, v = (self.heads_first(f(x)) for f in (self.q, self.k, self.v))
        s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd)
        a = torch.matmul(torch.softmax(s, dim=-1), v)     # [1,2,16,16]
        a = a.transpose(1, 2).reshape(1, self.seq, self.dim)
        x = self.ln1(x + self.o(a))
        return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))


class LnDecomposed(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.gamma = nn.Parameter(torch.rand(dim) + 0.5)
        self.beta = nn.Parameter(torch.randn(dim) * 0.2)

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return torch.tanh((x - mean) / torch.sqrt(var + 1e-5) * self.gamma + self.beta)


def static_dims(vi):
    dims = vi.type.tensor_type.shape.dim
    return all(d.HasField("dim_value") and d.dim_value > 0 for d in dims)


def check_model(path, require=(), strict=True):
    """Checks the model, its static shapes and its op set; returns the sorted op types. With
    strict=False an op outside SUPPORTED is only reported. Without the onnx package (only the
    big models are made then) nothing is checked and no op is listed."""
    if onnx is None:
        if strict:
            sys.exit("make_models.py: the tiny models need python3-onnx")
        print(f"{path.name}: not checked (no onnx package)")
        return []
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    ops = sorted({n.op_type for n in model.graph.node})
    print(f"{path.name}: opset {model.opset_import[0].version}, ops {' '.join(ops)}")
    bad = sorted(set(ops) - SUPPORTED)
    if bad and strict:
        sys.exit(f"make_models.py: {path.name} has unsupported ops {bad}")
    if bad:
        print(f"make_models.py: {path.name}: ops tensortune does not import: {' '.join(bad)}")
    missing = sorted(set(require) - set(ops))
    if missing:
        sys.exit(f"make_models.py: {path.name} lacks the ops {missing} it must keep")
    inferred = onnx.shape_inference.infer_shapes(model).graph
    for vi in list(inferred.input) + list(inferred.output) + list(inferred.value_info):
        if not static_dims(vi):
            sys.exit(f"make_models.py: {path.name}: value '{vi.name}' has a dynamic shape")
    return ops


# PyTorch 2.9 exports through torch.export by default: it folds BatchNormalization away, writes
# weights to a side file and ignores the opset asked for. The TorchScript exporter keeps all three.
TORCHSCRIPT_EXPORTER = ({"dynamo": False}
                        if "dynamo" in inspect.signature(torch.onnx.export).parameters else {})


def export(name, model, inputs, out, opset=13, preserve=False, require=(), big=False):
    """Exports `model` to out/<name>.onnx, writes its reference inputs/outputs, returns the
    manifest entry. `big` models (ResNet-18, the families) name their tensors input/output and
    may hold ops the importer lacks."""
    model.eval()
    path = out / f"{name}.onnx"
    in_names = ["input"] if big else ["x"]
    out_names = ["output"] if big else ["y"]
    mode = torch.onnx.TrainingMode.PRESERVE if preserve else torch.onnx.TrainingMode.EVAL
    with warnings.catch_warnings():  # PRESERVE warns about constant folding; the model is in eval
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(inputs), str(path), opset_version=opset,
                          input_names=in_names, output_names=out_names, training=mode,
                          do_constant_folding=True, **TORCHSCRIPT_EXPORTER)
    ops = check_model(path, require, strict=not big)
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    entry = {"file": path.name, "inputs": [], "outputs": [], "ops": ops}
    for kind, names, tensors in (("input", in_names, inputs), ("output", out_names, outputs)):
        for k, (n, t) in enumerate(zip(names, tensors)):
            arr = t.detach().numpy().astype(np.float32)
            fname = f"{name}.{kind}.{k}.npy"
            np.save(out / fname, arr)
            entry[kind + "s"].append({"name": n, "shape": list(arr.shape), "dtype": "float32",
                                      "file": fname})
    return entry


def random_input(seed, shape):
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


def make_tiny(out):
    specs = [  # name, class, input shape, opset, keep BN, ops the export must keep
        ("mlp", Mlp, (2, 64), 13, False, ("Gemm", "Erf", "Softmax")),
        ("cnn", Cnn, (1, 3, 16, 16), 13, True, ("BatchNormalization", "Conv")),
        ("encoder", Encoder, (1, 16, 32), 17, False, ("LayerNormalization", "MatMul")),
        ("ln_decomposed", LnDecomposed, (4, 32), 13, False, ("ReduceMean", "Pow", "Sqrt")),
        ("superres", SuperResolutionNet, (1, 1, 12, 12), 13, False, ("Conv", "DepthToSpace")),
    ]
    manifest = {}
    for seed, (name, cls, shape, opset, preserve, require) in enumerate(specs):
        torch.manual_seed(seed)
        manifest[name] = export(name, cls(), [random_input(100 + seed, shape)], out, opset,
                                preserve, require)
    manifest["bad"] = make_bad(out)
    return manifest


def save_checked(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="make_models.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def make_bad(out):
    """The malformed or unsupported models of the error tests."""
    f32 = TensorProto.FLOAT
    # Two unsupported ops (TopK, Hardmax) behind one supported one (Relu); static shapes.
    k = helper.make_tensor("k", TensorProto.INT64, [1], [3])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("TopK", ["r", "k"], ["values", "indices"], axis=-1),
         helper.make_node("Hardmax", ["r"], ["h"], axis=-1)],
        "unsupported", [helper.make_tensor_value_info("x", f32, [1, 8])],
        [helper.make_tensor_value_info("values", f32, [1, 3]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [1, 3]),
         helper.make_tensor_value_info("h", f32, [1, 8])], initializer=[k])
    save_checked(graph, out / "unsupported.onnx")
    # A Gemm whose batch dimension is symbolic.
    rng = np.random.default_rng(7)
    w = helper.make_tensor("w", f32, [16, 4], rng.standard_normal(64).astype(np.float32))
    b = helper.make_tensor("b", f32, [4], rng.standard_normal(4).astype(np.float32))
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"])], "dynamic",
        [helper.make_tensor_value_info("x", f32, ["N", 16])],
        [helper.make_tensor_value_info("y", f32, ["N", 4])], initializer=[w, b])
    save_checked(graph, out / "dynamic.onnx")
    data = (out / "mlp.onnx").read_bytes()
    (out / "truncated.onnx").write_bytes(data[:len(data) // 2])
    (out / "not_onnx.onnx").write_text("this is not an onnx model\n")
    return {
        "unsupported": {"file": "unsupported.onnx", "unsupported_ops": ["Hardmax", "TopK"]},
        "dynamic": {"file": "dynamic.onnx", "dynamic_input": "x", "dim_param": "N"},
        "truncated": {"file": "truncated.onnx", "truncated_from": "mlp.onnx"},
        "not_onnx": {"file": "not_onnx.onnx"},
    }


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock: two 3x3 convs with batch norm, a 1x1 stride-s shortcut
    with batch norm where the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    """torchvision's resnet18 architecture written out, for a machine without torchvision (a GPU
    machine with PyTorch alone): the same layers, so the same ONNX ops and kernel shapes."""

    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
                             (512, 1)):
            blocks.append(BasicBlock(cin, cout, stride))
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
        x = torch.flatten(self.avgpool(self.blocks(x)), 1)
        return self.fc(x)


def resnet18_module():
    """ResNet-18 with random weights (seed 0) and randomized batch norms: torchvision's, or the
    same network written out where torchvision is missing."""
    torch.manual_seed(0)
    try:
        import torchvision
        model = torchvision.models.resnet18(weights=None)
    except ImportError:
        print("make_models.py: no torchvision, ResNet-18 written out (other random weights)")
        model = ResNet18()
    randomize_bn(model)
    return model


def make_resnet18(out):
    model = resnet18_module()
    entry = export("resnet18", model, [random_input(200, (1, 3, 224, 224))], out, 13, True,
                   ("BatchNormalization", "Conv", "Gemm"), big=True)
    path = out / "models.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}
    manifest["resnet18"] = entry
    return manifest


class TransformerEncoder(nn.Module):
    """A BERT-base-like encoder stack as plain PyTorch writes it (nn.TransformerEncoder): 4 layers,
    d_model 256, 4 heads, GELU feed-forward of 1024, sequence 128, batch 1."""

    def __init__(self, layers=4, dim=256, heads=4, ffn=1024):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, heads, ffn, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, dim)

    def forward(self, x):                                 # [1,128,256]
        return self.head(self.encoder(x))


def make_superres(out):
    """The seeds' super-resolution demo model at its size: input 1x1x224x224, output 1x1x672x672."""
    torch.manual_seed(0)
    entry = export("superres", SuperResolutionNet(), [random_input(400, (1, 1, 224, 224))], out,
                   13, False, ("Conv", "DepthToSpace"), big=True)
    path = out / "models.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}
    manifest["superres"] = entry
    return manifest


def family_models():
    """name -> (constructor, input shape): one model per family bench/zero_shot reports."""
    import torchvision.models as tv
    return {
        "mobilenet_v2": (lambda: tv.mobilenet_v2(weights=None), (1, 3, 224, 224)),
        "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(weights=None), (1, 3, 224, 224)),
        "efficientnet_b0": (lambda: tv.efficientnet_b0(weights=None), (1, 3, 224, 224)),
        "squeezenet1_1": (lambda: tv.squeezenet1_1(weights=None), (1, 3, 224, 224)),
        "shufflenet_v2_x1_0": (lambda: tv.shufflenet_v2_x1_0(weights=None), (1, 3, 224, 224)),
        "regnet_y_400mf": (lambda: tv.regnet_y_400mf(weights=None), (1, 3, 224, 224)),
        "transformer_encoder": (TransformerEncoder, (1, 128, 256)),
    }


def make_families(out, only):
    try:
        import torchvision  # noqa: F401
    except ImportError:
        sys.exit("make_models.py: --family needs python3-torchvision "
                 "(apt-get install python3-torchvision)")
    models = family_models()
    names = only.split(",") if only else list(models)
    unknown = sorted(set(names) - set(models))
    if unknown:
        sys.exit(f"make_models.py: unknown family models {unknown}; known: {' '.join(models)}")
    path = out / "models.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}
    for name in names:
        seed = list(models).index(name)  # the same weights whichever subset is asked for
        make, shape = models[name]
        torch.manual_seed(seed)
        model = make()
        randomize_bn(model)
        manifest[name] = export(name, model, [random_input(300 + seed, shape)], out, 13, False,
                                big=True)
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tests/models", help="folder of the tiny models")
    parser.add_argument("--resnet18", metavar="DIR", help="export ResNet-18 into DIR instead")
    parser.add_argument("--superres", metavar="DIR",
                        help="export the super-resolution network (1x1x224x224) into DIR instead")
    parser.add_argument("--family", metavar="DIR", help="export the family models into DIR instead")
    parser.add_argument("--only", metavar="A,B", help="with --family: just these models")
    args = parser.parse_args()
    torch.set_num_threads(1)  # bit-reproducible reference outputs
    out = pathlib.Path(args.resnet18 or args.superres or args.family or args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.resnet18:
        manifest = make_resnet18(out)
    elif args.superres:
        manifest = make_superres(out)
    elif args.family:
        manifest = make_families(out, args.only)
    else:
        manifest = make_tiny(out)
    (out / "models.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"make_models.py: wrote {out / 'models.json'}")


if __name__ == "__main__":
    main()
