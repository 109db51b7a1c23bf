//! GELU, masked self-attention and the CPU's own projections (few-token
//! f32, reduced precision) on burn tensors,
//! through the `docshelf-kernels` crate where the tensors live on burn's
//! CPU backend.
//!
//! burn's CPU backend runs these steps far below the machine's speed (see
//! `docshelf-kernels` for the profile). The kernels plug in through
//! burn's backend-extension surface ([`Tensor::try_into_primitive`] /
//! [`Tensor::from_primitive`]): on the CPU backend they work on the
//! tensors' own buffers; on any other backend (wgpu) each function hands
//! the tensors to burn's own op, so the network has one code path.

use burn::backend::flex::{Flex, FlexTensor};
use burn::backend::DispatchDevice;
use burn::tensor::module::attention as burn_attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Bool, DType, Device, Tensor, TensorData};

/// Which tokens of each text are real (padding follows them), in the forms
/// attention and pooling want.
pub struct Padding {
    /// Real tokens per text.
    lengths: Vec<usize>,
    tokens: usize,
    heads: usize,
    /// burn's attention mask, `true` at padded keys,
    /// `[texts, heads, tokens, tokens]`; built only for backends these
    /// kernels do not cover.
    attention_mask: Option<Tensor<4, Bool>>,
}

impl Padding {
    /// The padding of a batch of `lengths.len()` texts padded to `tokens`.
    pub fn new(lengths: Vec<usize>, tokens: usize, heads: usize, device: &Device) -> Self {
        let mut padding = Self {
            lengths,
            tokens,
            heads,
            attention_mask: None,
        };
        if !on_cpu_backend(device) {
            padding.attention_mask = Some(padding.burn_mask(device));
        }
        padding
    }

    /// `1.0` for each real token and `0.0` for padding, `[texts, tokens]`:
    /// the weights of mean pooling.
    pub fn real_tokens(&self, device: &Device) -> Tensor<2> {
        let weights: Vec<f32> = self.flags(|real| if real { 1.0 } else { 0.0 });
        Tensor::from_data(
            TensorData::new(weights, [self.lengths.len(), self.tokens]),
            device,
        )
    }

    /// Every text holds at least `[CLS]` and `[SEP]`, so no query's row of
    /// the mask is all padding (which would leave its softmax empty).
    fn burn_mask(&self, device: &Device) -> Tensor<4, Bool> {
        let texts = self.lengths.len();
        let padded: Vec<bool> = self.flags(|real| !real);
        Tensor::<2, Bool>::from_data(TensorData::new(padded, [texts, self.tokens]), device)
            .reshape([texts, 1, 1, self.tokens])
            .expand([texts, self.heads, self.tokens, self.tokens])
    }

    /// `value(is real)` for every token of every text, row-major.
    fn flags<T>(&self, value: impl Fn(bool) -> T) -> Vec<T> {
        let tokens = self.tokens;
        self.lengths
            .iter()
            .flat_map(|&len| (0..tokens).map(move |i| i < len))
            .map(value)
            .collect()
    }
}

/// Whether `device` is burn's CPU backend, where these kernels apply.
fn on_cpu_backend(device: &Device) -> bool {
    matches!(device.as_dispatch(), DispatchDevice::Flex(_))
}

/// A tensor as the kernels see it: the CPU backend's `f32` buffer they can
/// work on, or a tensor they leave to burn.
enum Operand<const D: usize> {
    Cpu(FlexTensor),
    /// Boxed: a burn tensor is several times a primitive's size, and this
    /// path (wgpu) pays far more per op than one allocation.
    Burn(Box<Tensor<D>>),
}

impl<const D: usize> Operand<D> {
    fn new(tensor: Tensor<D>) -> Self {
        if !on_cpu_backend(&tensor.device()) || tensor.dtype() != DType::F32 {
            return Self::Burn(Box::new(tensor));
        }
        // The clone shares the buffer; dropping the original on success
        // leaves the primitive its only owner, so in-place kernels need not
        // copy.
        match tensor.clone().try_into_primitive::<Flex>() {
            Ok(primitive) => Self::Cpu(primitive),
            Err(_) => Self::Burn(Box::new(tensor)),
        }
    }

    fn into_tensor(self) -> Tensor<D> {
        match self {
            Self::Cpu(primitive) => Tensor::from_primitive::<Flex>(primitive),
            Self::Burn(tensor) => *tensor,
        }
    }
}

/// `kernel` over a CPU tensor's elements in row-major order, its output
/// wrapped as a CPU tensor of `shape`; the tensor handed back when its
/// buffer cannot be read as one slice.
fn map_elements<const D: usize>(
    tensor: FlexTensor,
    shape: [usize; D],
    kernel: impl FnOnce(&[f32]) -> Vec<f32>,
) -> Result<Tensor<D>, FlexTensor> {
    let tensor = tensor.to_contiguous();
    let elements = tensor
        .layout()
        .contiguous_offsets()
        .and_then(|(start, end)| tensor.storage::<f32>().get(start..end));
    match elements {
        Some(elements) => {
            let data = TensorData::new(kernel(elements), shape);
            Ok(Tensor::from_primitive::<Flex>(FlexTensor::from_data(data)))
        }
        None => Err(tensor),
    }
}

/// GELU (exact, erf form), on every core when on the CPU backend.
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    let mut primitive = match Operand::new(x) {
        Operand::Cpu(primitive) => primitive,
        Operand::Burn(x) => return burn::tensor::activation::gelu(*x),
    };
    if !primitive.is_contiguous() {
        primitive = primitive.to_contiguous();
    }
    if let Some((start, end)) = primitive.layout().contiguous_offsets() {
        // Copies only if the buffer is shared, which a fresh activation is not.
        docshelf_kernels::gelu_in_place(&mut primitive.storage_mut::<f32>()[start..end]);
    }
    Tensor::from_primitive::<Flex>(primitive)
}

/// Scaled dot-product self-attention, `softmax(Q·Kᵀ / √d)·V` per head, over
/// the real tokens of each text. `qkv` is `[texts, tokens, 3·width]`: each
/// token's query, key and value projections side by side, with the heads
/// side by side within each; the result is `[texts, tokens, width]`.
pub fn attention(qkv: Tensor<3>, padding: &Padding) -> Tensor<3> {
    let [texts, tokens, fused_width] = qkv.dims();
    let width = fused_width / 3;
    let shape = docshelf_kernels::Shape {
        texts,
        tokens,
        width,
        heads: padding.heads,
    };
    let fits = texts == padding.lengths.len() && tokens == padding.tokens;
    match Operand::new(qkv) {
        Operand::Cpu(qkv) if fits => map_elements(qkv, [texts, tokens, width], |qkv| {
            docshelf_kernels::attention(qkv, &padding.lengths, shape)
        })
        .unwrap_or_else(|qkv| burn_path(Tensor::from_primitive::<Flex>(qkv), padding, shape)),
        operand => burn_path(operand.into_tensor(), padding, shape),
    }
}

/// A projection computed by `product` (`x` `[rows, inputs]` row-major to
/// `[rows, outputs]`) for `x` `[batch, tokens, inputs]` on the CPU backend:
/// the packed f32 product of a few tokens, or a reduced-precision one.
/// `otherwise` computes the same projection from `x` where `x` is not there.
pub fn cpu_product(
    x: Tensor<3>,
    [inputs, outputs]: [usize; 2],
    product: impl FnOnce(&[f32], usize) -> Vec<f32>,
    otherwise: impl FnOnce(Tensor<3>) -> Tensor<3>,
) -> Tensor<3> {
    let [batch, tokens, width] = x.dims();
    if width != inputs {
        return otherwise(x);
    }
    match Operand::new(x) {
        Operand::Cpu(x) => {
            map_elements(x, [batch, tokens, outputs], |x| product(x, batch * tokens))
                .unwrap_or_else(|x| otherwise(Tensor::from_primitive::<Flex>(x)))
        }
        operand => otherwise(operand.into_tensor()),
    }
}

/// burn's own fused attention op, with the padding as a boolean mask.
fn burn_path(qkv: Tensor<3>, padding: &Padding, shape: docshelf_kernels::Shape) -> Tensor<3> {
    let docshelf_kernels::Shape {
        texts,
        tokens,
        width,
        heads,
    } = shape;
    let [q, k, v] = [0, 1, 2].map(|part| {
        qkv.clone()
            .narrow(2, part * width, width)
            .reshape([texts, tokens, heads, width / heads])
            .swap_dims(1, 2)
    });
    let mask = match &padding.attention_mask {
        Some(mask) => mask.clone(),
        None => padding.burn_mask(&q.device()),
    };
    // The default scale is BERT's 1/sqrt(head width).
    burn_attention(q, k, v, Some(mask), None, AttentionModuleOptions::default())
        .swap_dims(1, 2)
        .reshape([texts, tokens, width])
}
