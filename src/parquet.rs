//! Apache Parquet output for large runs (`[outputs] parquet = true`, cargo feature `parquet`): a run's tables are
//! written as `.parquet` instead of `.csv`, one row group per file, converted from the CSV text the writers build so
//! both forms hold the same values. A column is INT64 when every value is an integer, DOUBLE when every value is a
//! number, else UTF8 text; an empty cell is null.

use std::sync::Arc;

use parquet::basic::{Compression, ConvertedType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// What a column holds, the narrowest type that fits every value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Double,
    Text,
}

fn kind_of(values: &[Option<&str>]) -> Kind {
    let present = || values.iter().flatten();
    if present().next().is_none() {
        Kind::Text
    } else if present().all(|v| v.parse::<i64>().is_ok()) {
        Kind::Int
    } else if present().all(|v| v.parse::<f64>().is_ok()) {
        Kind::Double
    } else {
        Kind::Text
    }
}

/// Splits the CSV text [`crate::output::Csv`] writes: fields quoted when they hold a comma, a quote or a line break,
/// quotes doubled inside.
fn records(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut field, mut quoted, mut chars) = (Vec::new(), String::new(), false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

/// The Parquet file holding the table of `csv` (a header line, then the rows).
pub fn from_csv(csv: &[u8]) -> Result<Vec<u8>, ParquetError> {
    let text = std::str::from_utf8(csv).map_err(|e| ParquetError::General(e.to_string()))?;
    let mut rows = records(text).into_iter();
    let header = rows.next().unwrap_or_default();
    let rows: Vec<Vec<String>> = rows.collect();
    let columns: Vec<Vec<Option<&str>>> = (0..header.len())
        .map(|i| rows.iter().map(|r| r.get(i).map(String::as_str).filter(|v| !v.is_empty())).collect())
        .collect();
    let kinds: Vec<Kind> = columns.iter().map(|c| kind_of(c)).collect();
    let fields = header
        .iter()
        .zip(&kinds)
        .map(|(name, kind)| {
            let (physical, converted) = match kind {
                Kind::Int => (Physical::INT64, ConvertedType::NONE),
                Kind::Double => (Physical::DOUBLE, ConvertedType::NONE),
                Kind::Text => (Physical::BYTE_ARRAY, ConvertedType::UTF8),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_converted_type(converted)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let schema = Arc::new(Type::group_type_builder("table").with_fields(fields).build()?);
    let props = Arc::new(WriterProperties::builder().set_compression(Compression::SNAPPY).build());
    let mut writer = SerializedFileWriter::new(Vec::new(), schema, props)?;
    let mut group = writer.next_row_group()?;
    let mut columns = columns.iter().zip(&kinds);
    while let Some(mut column) = group.next_column()? {
        let (values, kind) = columns.next().ok_or_else(|| ParquetError::General("a column too many".into()))?;
        let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
        let present = values.iter().flatten();
        // Each value parsed when the column's kind was chosen, so these conversions cannot fail.
        match kind {
            Kind::Int => {
                let v: Vec<i64> = present.map(|v| v.parse().unwrap_or_default()).collect();
                column.typed::<Int64Type>().write_batch(&v, Some(&levels), None)?;
            }
            Kind::Double => {
                let v: Vec<f64> = present.map(|v| v.parse().unwrap_or_default()).collect();
                column.typed::<DoubleType>().write_batch(&v, Some(&levels), None)?;
            }
            Kind::Text => {
                let v: Vec<ByteArray> = present.map(|v| ByteArray::from(*v)).collect();
                column.typed::<ByteArrayType>().write_batch(&v, Some(&levels), None)?;
            }
        }
        column.close()?;
    }
    group.close()?;
    writer.into_inner()
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    use super::*;

    #[test]
    fn a_table_reads_back_with_its_types_and_nulls() {
        let csv = "id,t,site,reason\n1,0.5,a,\n2,3,b,\"too wide, and \"\"late\"\"\"\n";
        let path = std::env::temp_dir().join(format!("gridmarket-parquet-{}.parquet", std::process::id()));
        std::fs::write(&path, from_csv(csv.as_bytes()).unwrap()).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let rows: Vec<Vec<(String, Field)>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().get_column_iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .collect();
        let _ = std::fs::remove_file(&path);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][0], ("id".into(), Field::Long(1)));
        assert_eq!(rows[0][1], ("t".into(), Field::Double(0.5)));
        assert_eq!(rows[1][1], ("t".into(), Field::Double(3.0)), "a column of numbers stays DOUBLE");
        assert_eq!(rows[0][2], ("site".into(), Field::Str("a".into())));
        assert_eq!(rows[0][3], ("reason".into(), Field::Null));
        assert_eq!(rows[1][3], ("reason".into(), Field::Str("too wide, and \"late\"".into())));
    }
}
