//! GELU, masked self-attention and few-token projections on burn tensors,
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
use docshelf_kernels::PackedWeights;

/// Which tokens of each text are real: the padding mask, in the form each
/// backend's attention wants it.
pub struct Padding {
    /// Real tokens per text; padding follows them.
    lengths: Vec<usize>,
    tokens: usize,
    heads: usize,
    /// burn's mask, `true` at padded keys, `[texts, heads, tokens, tokens]`;
    /// built only for backends these kernels do not cover.
    mask: Option<Tensor<4, Bool>>,
}

impl Padding {
    /// The padding of a batch of `lengths.len()` texts padded to `tokens`.
    pub fn new(lengths: Vec<usize>, tokens: usize, heads: usize, device: &Device) -> Self {
        let mut padding = Self {
            lengths,
            tokens,
            heads,
            mask: None,
        };
        if !on_cpu_backend(device) {
            padding.mask = Some(padding.burn_mask(device));
        }
        padding
    }

    /// Every text holds at least `[CLS]` and `[SEP]`, so no query's row of
    /// the mask is all padding (which would leave its softmax empty).
    fn burn_mask(&self, device: &Device) -> Tensor<4, Bool> {
        let texts = self.lengths.len();
        let tokens = self.tokens;
        let padded: Vec<bool> = self
            .lengths
            .iter()
            .flat_map(|&len| (0..tokens).map(move |i| i >= len))
            .collect();
        Tensor::<2, Bool>::from_data(TensorData::new(padded, [texts, tokens]), device)
            .reshape([texts, 1, 1, tokens])
            .expand([texts, self.heads, tokens, tokens])
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

/// A contiguous tensor's elements.
fn elements(tensor: &FlexTensor) -> Option<&[f32]> {
    let (start, end) = tensor.layout().contiguous_offsets()?;
    tensor.storage::<f32>().get(start..end)
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
        Operand::Cpu(qkv) if fits => {
            let qkv = qkv.to_contiguous();
            if let Some(elements) = elements(&qkv) {
                let out = docshelf_kernels::attention(elements, &padding.lengths, shape);
                let data = TensorData::new(out, [texts, tokens, width]);
                return Tensor::from_primitive::<Flex>(FlexTensor::from_data(data));
            }
            burn_path(Tensor::from_primitive::<Flex>(qkv), padding, shape)
        }
        operand => burn_path(operand.into_tensor(), padding, shape),
    }
}

/// `x · weight + bias` with `packed`'s parameters, for `x`
/// `[batch, tokens, inputs]` on the CPU backend; `otherwise` computes the
/// same product from `x` where `x` is not there.
pub fn packed_product(
    x: Tensor<3>,
    packed: &PackedWeights,
    otherwise: impl FnOnce(Tensor<3>) -> Tensor<3>,
) -> Tensor<3> {
    let [batch, tokens, inputs] = x.dims();
    if inputs != packed.inputs() {
        return otherwise(x);
    }
    match Operand::new(x) {
        Operand::Cpu(x) => {
            let x = x.to_contiguous();
            match elements(&x) {
                Some(elements) => {
                    let out = packed.product(elements, batch * tokens);
                    let data = TensorData::new(out, [batch, tokens, packed.outputs()]);
                    Tensor::from_primitive::<Flex>(FlexTensor::from_data(data))
                }
                None => otherwise(Tensor::from_primitive::<Flex>(x)),
            }
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
    let mask = match &padding.mask {
        Some(mask) => mask.clone(),
        None => padding.burn_mask(&q.device()),
    };
    // The default scale is BERT's 1/sqrt(head width).
    burn_attention(q, k, v, Some(mask), None, AttentionModuleOptions::default())
        .swap_dims(1, 2)
        .reshape([texts, tokens, width])
}
